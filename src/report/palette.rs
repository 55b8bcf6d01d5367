//! Colours readable by colour-blind readers: the Okabe-Ito qualitative palette for series
//! (variants, migration reasons, tasks) and viridis for magnitudes (utilisation).

use plotters::style::RGBColor;

/// Okabe & Ito (2008), without black (kept for text): orange, sky blue, bluish green,
/// yellow, blue, vermillion, reddish purple, grey.
pub const OKABE_ITO: [RGBColor; 8] = [
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xF0, 0xE4, 0x42),
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0x99, 0x99, 0x99),
];

/// The `i`-th series colour (cycling).
pub fn series(i: usize) -> RGBColor {
    OKABE_ITO[i % OKABE_ITO.len()]
}

/// Viridis sampled at nine evenly spaced points (matplotlib's table).
const VIRIDIS: [(u8, u8, u8); 9] = [
    (0x44, 0x01, 0x54),
    (0x47, 0x2c, 0x7a),
    (0x3b, 0x51, 0x8b),
    (0x2c, 0x71, 0x8e),
    (0x21, 0x90, 0x8d),
    (0x27, 0xad, 0x81),
    (0x5c, 0xc8, 0x63),
    (0xaa, 0xdc, 0x32),
    (0xfd, 0xe7, 0x25),
];

/// Viridis at `t` in 0..=1 (clamped), linearly interpolated.
pub fn viridis(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (VIRIDIS.len() - 1) as f64;
    let i = (x.floor() as usize).min(VIRIDIS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (VIRIDIS[i], VIRIDIS[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// `#rrggbb` for CSS.
pub fn css(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn viridis_runs_dark_to_light_and_clamps() {
        assert_eq!(css(viridis(0.0)), "#440154");
        assert_eq!(css(viridis(1.0)), "#fde725");
        assert_eq!(css(viridis(-3.0)), "#440154");
        assert_eq!(css(viridis(f64::NAN)), "#440154");
        let lum = |c: RGBColor| 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        let mut last = -1.0;
        for i in 0..=20 {
            let l = lum(viridis(i as f64 / 20.0));
            assert!(l > last, "viridis lightness rises monotonically");
            last = l;
        }
    }
}
