//! The report's charts, drawn with `plotters` into SVG strings that the page inlines.
//!
//! Size is bounded whatever the run: grids (heat map, task timeline) are cut to at most
//! [`GRID_CELLS_MAX`] cells by averaging neighbouring time buckets, and neighbouring cells of
//! one colour are drawn as one rectangle; at most [`MARKS_DRAWN_MAX`] migrations are marked.

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::palette::{self, series, viridis};
use crate::stats::timeline::Timeline;

/// Most cells (CPU rows × time columns) one grid chart draws.
pub const GRID_CELLS_MAX: usize = 24_000;
/// Most migrations marked on the task timeline.
pub const MARKS_DRAWN_MAX: usize = 1_500;
/// Utilisation levels a heat-map cell is quantized to (cells of one level merge).
pub const HEAT_LEVELS: usize = 20;

type DrawResult = Result<(), Box<dyn std::error::Error>>;
const FONT: &str = "sans-serif";

/// Draw into an SVG of `w` × `h` pixels; a drawing error gives a note instead of a chart.
fn svg(
    w: u32,
    h: u32,
    f: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> String {
    let mut out = String::new();
    let result = {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        root.fill(&WHITE)
            .map_err(|e| e.into())
            .and_then(|()| f(&root))
            .and_then(|()| root.present().map_err(|e| e.into()))
    };
    match result {
        Ok(()) => out,
        Err(e) => format!(
            "<p class=\"note\">chart not drawn: {}</p>",
            super::html::esc(&e.to_string())
        ),
    }
}

/// The series legend every chart uses: framed, on a translucent white box, at `position`.
fn draw_legend<'a, 'b: 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 11))
        .draw()?;
    Ok(())
}

/// The builder every chart starts from: `caption` in `caption_pt` points, the common margin,
/// and label areas of `x_area` (below) and `y_area` (left) pixels.
fn chart_on<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    caption_pt: u32,
    (x_area, y_area): (u32, u32),
) -> ChartBuilder<'a, 'static, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(root);
    builder
        .caption(caption, (FONT, caption_pt))
        .margin(8)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area);
    builder
}

/// One named line of `width` pixels in `color`, with the matching legend stroke.
fn draw_line<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    name: &str,
    pts: impl IntoIterator<Item = (f64, f64)>,
    color: RGBColor,
    width: u32,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(LineSeries::new(pts, color.stroke_width(width)))?
        .label(name)
        .legend(move |(x, y)| {
            PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(width))
        });
    Ok(())
}

/// Decades a log axis may span at most (see `log_span`).
const LOG_SPAN_DECADES_MAX: i32 = 12;

/// A log axis over `lo..hi` widened by the factor `pad` each way, and to at least a 16x span
/// so that it has a labelled power of ten inside it.
///
/// Bounded to `LOG_SPAN_DECADES_MAX` decades below `hi` (and `hi` to 1e150): plotters walks
/// every decade of a log axis for its key points, and a results file is input — an absurd
/// value (1e300, or a tiny positive one) must not make the page take forever. Real
/// latency ranges span far fewer decades and are unchanged.
fn log_span(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    let hi = if hi.is_finite() { hi.min(1e150) } else { 1e150 };
    let lo = lo.max(hi / 10f64.powi(LOG_SPAN_DECADES_MAX));
    let mid = (lo * hi).sqrt();
    ((lo / pad).min(mid / 4.0), (hi * pad).max(mid * 4.0))
}

/// The largest value of any line (0 when there is none or all are negative).
fn value_max(lines: &[(String, Vec<f64>)]) -> f64 {
    lines
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .fold(0.0f64, f64::max)
}

/// The label of a category row chart's y position `y`: the category whose row (top to
/// bottom) holds `y`, near the middle of the row only (empty elsewhere).
fn row_label(labels: &[String], y: f64) -> String {
    let n = labels.len() as f64;
    let i = n - y.floor() - 1.0;
    if (0.0..n).contains(&i) && ((y - y.floor()) - 0.5).abs() < 0.26 {
        labels[i as usize].clone()
    } else {
        String::new()
    }
}

/// The mesh of a chart with one row per label (top to bottom) and a value axis `x_desc`.
fn draw_row_mesh(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    labels: &[String],
    x_desc: &str,
) -> DrawResult {
    let yfmt = |y: &f64| row_label(labels, *y);
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(labels.len() * 2 + 1)
        .y_label_formatter(&yfmt)
        .x_desc(x_desc)
        .label_style((FONT, 11))
        .light_line_style(WHITE)
        .draw()?;
    Ok(())
}

/// The x axis of a chart of lines over simulated time: its width, unit and end.
struct TimeAxis<'a> {
    width_px: u32,
    x_desc: &'a str,
    x_max: f64,
}

/// Lines over simulated time (`lines` gives each line's name, points and stroke width),
/// y from 0 to 1.1 × `y_max`.
fn time_lines<'l>(
    caption: &str,
    y_desc: &str,
    axis: &TimeAxis<'_>,
    y_max: f64,
    lines: impl Iterator<Item = (&'l str, Vec<(f64, f64)>, u32)>,
) -> String {
    svg(axis.width_px, 300, |root| {
        let mut chart = chart_on(root, caption, 15, (36, 64))
            .build_cartesian_2d(0.0..axis.x_max, 0.0..y_max * 1.1)?;
        chart
            .configure_mesh()
            .x_desc(axis.x_desc)
            .y_desc(y_desc)
            .label_style((FONT, 11))
            .light_line_style(WHITE)
            .draw()?;
        for (i, (name, pts, width)) in lines.enumerate() {
            draw_line(&mut chart, name, pts, series(i), width)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// The column geometry of a grid chart (rows of CPUs × merged time buckets).
struct Grid {
    /// Rows (CPUs).
    n: usize,
    /// Timeline buckets merged into one column.
    k: usize,
    /// Columns.
    cols: usize,
    /// Width of a column (ms).
    col_ms: f64,
    /// End of the time axis (ms).
    x_max: f64,
}

impl Grid {
    fn of(tl: &Timeline, rows: &RowLayout) -> Grid {
        let n = rows.cpus.len();
        let k = merge_factor(n, tl.buckets());
        Grid {
            n,
            k,
            cols: tl.buckets().div_ceil(k),
            col_ms: tl.bucket_ns as f64 * k as f64 / 1e6,
            x_max: tl.end_ns as f64 / 1e6,
        }
    }

    /// The timeline buckets of column `c`.
    fn buckets(&self, tl: &Timeline, c: usize) -> std::ops::Range<usize> {
        c * self.k..((c + 1) * self.k).min(tl.buckets())
    }

    /// Each run of neighbouring columns of row `row` with one `key`: `emit(x0, x1, key, y)`
    /// with the run's time span in ms (`x1` clipped to the axis end) and the row's bottom `y`.
    fn runs<T: PartialEq>(
        &self,
        row: usize,
        key: impl Fn(usize) -> T,
        mut emit: impl FnMut(f64, f64, T, f64),
    ) {
        let y = (self.n - row - 1) as f64;
        let mut c = 0;
        while c < self.cols {
            let t = key(c);
            let mut e = c + 1;
            while e < self.cols && key(e) == t {
                e += 1;
            }
            emit(
                c as f64 * self.col_ms,
                (e as f64 * self.col_ms).min(self.x_max),
                t,
                y,
            );
            c = e;
        }
    }
}

/// CPUs in drawing order (top to bottom) with the rows where an LLC (or a package) begins.
#[derive(Debug, Clone, Default)]
pub struct RowLayout {
    pub cpus: Vec<usize>,
    /// `(row, package_boundary)` for each row that starts a new LLC (or package).
    pub boundaries: Vec<(usize, bool)>,
}

/// Columns of `buckets` merged `k` at a time so that `rows × columns <= GRID_CELLS_MAX`.
fn merge_factor(rows: usize, buckets: usize) -> usize {
    (rows * buckets).div_ceil(GRID_CELLS_MAX).max(1)
}

fn grid_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    caption: &str,
    x_max: f64,
    rows: &'a RowLayout,
) -> Result<
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    Box<dyn std::error::Error>,
> {
    let n = rows.cpus.len();
    let mut chart =
        chart_on(root, caption, 16, (36, 56)).build_cartesian_2d(0.0..x_max, 0.0..n as f64)?;
    let label = |y: &f64| {
        let row = n as f64 - y.round() - 1.0;
        if row >= 0.0 && (row as usize) < n {
            format!("cpu {}", rows.cpus[row as usize])
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc("simulated time (ms)")
        .y_desc("CPU (topology order)")
        .y_labels(n.min(24))
        .y_label_formatter(&label)
        .label_style((FONT, 11))
        .draw()?;
    Ok(chart)
}

fn draw_boundaries(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    rows: &RowLayout,
    x_max: f64,
) -> DrawResult {
    let n = rows.cpus.len() as f64;
    chart.draw_series(
        rows.boundaries
            .iter()
            .filter(|(r, _)| *r > 0)
            .map(|&(r, pkg)| {
                let y = n - r as f64;
                let style = if pkg {
                    BLACK.stroke_width(2)
                } else {
                    WHITE.stroke_width(1)
                };
                PathElement::new(vec![(0.0, y), (x_max, y)], style)
            }),
    )?;
    Ok(())
}

/// Per-CPU utilisation over time, rows in topology order, viridis from idle to busy.
pub fn heatmap(tl: &Timeline, rows: &RowLayout) -> String {
    let g = Grid::of(tl, rows);
    let height = (120 + g.n * 4).clamp(260, 1000) as u32;
    svg(960, height, |root| {
        let caption = format!("CPU utilisation (busy fraction per {:.3} ms)", g.col_ms);
        let mut chart = grid_chart(root, &caption, g.x_max, rows)?;
        let mut cells = Vec::new();
        for (row, &cpu) in rows.cpus.iter().enumerate() {
            let level = |c: usize| {
                let b = g.buckets(tl, c);
                let f: f64 =
                    b.clone().map(|b| tl.busy_fraction(cpu, b)).sum::<f64>() / b.len() as f64;
                (f * HEAT_LEVELS as f64).round() as usize
            };
            g.runs(row, level, |x0, x1, l, y| {
                let color = viridis(l as f64 / HEAT_LEVELS as f64);
                cells.push(Rectangle::new([(x0, y), (x1, y + 1.0)], color.filled()));
            });
        }
        chart.draw_series(cells)?;
        draw_boundaries(&mut chart, rows, g.x_max)
    })
}

/// Per-CPU timeline of the task that ran longest in each interval (a colour per pid,
/// cycling through the palette; idle is white), migrations marked at their destination by
/// reason.
pub fn task_timeline(tl: &Timeline, rows: &RowLayout, reasons: &[String]) -> String {
    let g = Grid::of(tl, rows);
    let n = g.n;
    let height = (140 + n * 4).clamp(280, 1000) as u32;
    svg(960, height, |root| {
        let caption = format!(
            "Task on each CPU (longest runner per {:.3} ms; ▲ = migration in)",
            g.col_ms
        );
        let mut chart = grid_chart(root, &caption, g.x_max, rows)?;
        let row_of: std::collections::BTreeMap<usize, usize> =
            rows.cpus.iter().enumerate().map(|(r, &c)| (c, r)).collect();
        let mut cells = Vec::new();
        for (row, &cpu) in rows.cpus.iter().enumerate() {
            let top = |c: usize| g.buckets(tl, c).find_map(|b| tl.cpu_top_pid[cpu][b]);
            g.runs(row, top, |x0, x1, t, y| {
                if let Some(pid) = t {
                    let color = series(pid).mix(0.55);
                    cells.push(Rectangle::new(
                        [(x0, y + 0.1), (x1, y + 0.9)],
                        color.filled(),
                    ));
                }
            });
        }
        chart.draw_series(cells)?;
        draw_boundaries(&mut chart, rows, g.x_max)?;
        let step = tl.migration_marks.len().div_ceil(MARKS_DRAWN_MAX).max(1);
        // Thin a canonical order: marks at one instant (an idle balancer's burst) come in
        // the order the run made them from a run, but by CPU from a Perfetto trace.
        let mut canonical: Vec<_> = tl.migration_marks.iter().collect();
        canonical.sort_by_key(|m| (m.ts_ns, m.to, m.pid, m.from));
        for (i, reason) in reasons.iter().enumerate() {
            let color = palette::OKABE_ITO[(i + 4) % 8];
            let marks: Vec<_> = canonical
                .iter()
                .step_by(step)
                .filter(|m| &m.reason == reason)
                .filter_map(|m| {
                    row_of
                        .get(&m.to)
                        .map(|&r| (m.ts_ns as f64 / 1e6, (n - r) as f64 - 0.5))
                })
                .collect();
            if marks.is_empty() {
                continue;
            }
            chart
                .draw_series(
                    marks
                        .into_iter()
                        .map(move |p| TriangleMarker::new(p, 4, color.filled())),
                )?
                .label(reason.as_str())
                .legend(move |(x, y)| TriangleMarker::new((x + 6, y), 5, color.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// Latency percentiles of one metric, one line per variant: x = the percentile on a
/// "number of nines" axis (p50, p90, p99, p99.9, then max), y = µs on a log scale.
pub fn percentiles(metric: &str, lines: &[(String, [f64; 5])]) -> String {
    let xs = [0.301, 1.0, 2.0, 3.0, 3.6];
    let all = lines
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| *v > 0.0);
    let lo = all.clone().fold(f64::INFINITY, f64::min);
    let hi = all.fold(0.0f64, f64::max);
    if !lo.is_finite() || hi <= 0.0 {
        return "<p class=\"note\">no samples</p>".to_string();
    }
    let (lo, hi) = log_span(lo, hi, 1.5);
    svg(460, 300, |root| {
        let caption = format!("{metric} latency percentiles");
        let mut chart = chart_on(root, &caption, 15, (36, 60))
            .build_cartesian_2d(0.0..3.9, (lo..hi).log_scale())?;
        let xfmt = |x: &f64| match (x * 10.0).round() as i64 {
            3 => "p50".into(),
            10 => "p90".into(),
            20 => "p99".into(),
            30 => "p99.9".into(),
            36 => "max".into(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .x_labels(40)
            .disable_x_mesh()
            .x_label_formatter(&xfmt)
            .x_desc("percentile")
            .y_desc("latency (µs, log scale)")
            .label_style((FONT, 11))
            .light_line_style(WHITE)
            .draw()?;
        for (i, (name, v)) in lines.iter().enumerate() {
            let color = series(i);
            let pts: Vec<(f64, f64)> = xs
                .iter()
                .zip(v)
                .filter(|(_, y)| **y > 0.0)
                .map(|(x, y)| (*x, *y))
                .collect();
            draw_line(&mut chart, name, pts.clone(), color, 2)?;
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

/// Lines over simulated time: `series[i]` has one value per step of `step_ms`.
pub fn lines_over_time(
    caption: &str,
    y_desc: &str,
    step_ms: f64,
    lines: &[(String, Vec<f64>)],
) -> String {
    let y_max = value_max(lines);
    let x_max = lines.iter().map(|(_, v)| v.len()).max().unwrap_or(0) as f64 * step_ms;
    if y_max <= 0.0 || x_max <= 0.0 {
        return "<p class=\"note\">nothing happened over time</p>".to_string();
    }
    let axis = TimeAxis {
        width_px: 960,
        x_desc: "simulated time (ms)",
        x_max,
    };
    let drawn = lines.iter().map(|(name, v)| {
        let pts = v.iter().enumerate();
        let pts = pts.map(|(b, y)| ((b as f64 + 0.5) * step_ms, *y)).collect();
        (name.as_str(), pts, 2)
    });
    time_lines(caption, y_desc, &axis, y_max, drawn)
}

/// Grouped horizontal bars: one group per category, one bar per series (variant).
pub fn hbars(
    caption: &str,
    x_desc: &str,
    categories: &[String],
    bars: &[(String, Vec<f64>)],
) -> String {
    let x_max = value_max(bars);
    if categories.is_empty() || x_max <= 0.0 {
        return "<p class=\"note\">all zero</p>".to_string();
    }
    let per = bars.len().max(1) as f64;
    let height = (90 + categories.len() * (10 + 12 * bars.len())).clamp(160, 900) as u32;
    svg(720, height, |root| {
        let n = categories.len() as f64;
        let mut chart =
            chart_on(root, caption, 15, (36, 190)).build_cartesian_2d(0.0..x_max * 1.08, 0.0..n)?;
        draw_row_mesh(&mut chart, categories, x_desc)?;
        for (s, (name, v)) in bars.iter().enumerate() {
            let color = series(s);
            let rects = v.iter().enumerate().map(|(c, &x)| {
                let top = n - c as f64 - 0.1 - s as f64 * 0.8 / per;
                Rectangle::new([(0.0, top - 0.8 / per), (x, top)], color.filled())
            });
            chart
                .draw_series(rects)?
                .label(name.as_str())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 4), (x + 12, y + 4)], color.filled())
                });
        }
        if bars.len() > 1 {
            draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        Ok(())
    })
}

/// One paired delta to draw: the metric, the variant index, and the mean change with its
/// confidence interval, all in % of the baseline mean.
#[derive(Debug, Clone)]
pub struct DeltaBar {
    pub metric: String,
    pub variant: usize,
    pub mean_pct: f64,
    pub lo_pct: f64,
    pub hi_pct: f64,
}

/// Paired deltas with 95% confidence intervals, one row per metric, variants offset within it.
pub fn deltas(metrics: &[String], variants: &[String], bars: &[DeltaBar]) -> String {
    let axes = DeltaAxes {
        caption: "Paired delta vs baseline (mean over seeds, 95% CI)",
        x_desc: "change vs baseline (% of baseline mean)",
        min_extent: 0.5,
    };
    deltas_on(&axes, metrics, variants, bars)
}

/// What a delta chart says around its bars.
pub struct DeltaAxes<'a> {
    pub caption: &'a str,
    pub x_desc: &'a str,
    /// The x axis spans at least ±this.
    pub min_extent: f64,
}

/// [`deltas`] with its own caption, x label and least extent (e.g. bisect's effects in the
/// metric's units): one row per `metrics` entry, intervals centred on zero.
pub fn deltas_on(
    axes: &DeltaAxes<'_>,
    metrics: &[String],
    variants: &[String],
    bars: &[DeltaBar],
) -> String {
    if bars.is_empty() {
        return "<p class=\"note\">no paired metric</p>".to_string();
    }
    let ext = bars
        .iter()
        .flat_map(|b| [b.lo_pct.abs(), b.hi_pct.abs(), b.mean_pct.abs()])
        .filter(|v| v.is_finite())
        .fold(axes.min_extent, f64::max);
    let ext = if ext > 0.0 { ext * 1.1 } else { 1.0 };
    let n = metrics.len() as f64;
    let per = variants.len().max(1) as f64;
    let height = (100 + metrics.len() * (8 + 12 * variants.len())).clamp(200, 1400) as u32;
    svg(820, height, |root| {
        let mut chart =
            chart_on(root, axes.caption, 15, (36, 260)).build_cartesian_2d(-ext..ext, 0.0..n)?;
        draw_row_mesh(&mut chart, metrics, axes.x_desc)?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(0.0, 0.0), (0.0, n)],
            BLACK.stroke_width(1),
        )))?;
        for (v, name) in variants.iter().enumerate() {
            let color = series(v);
            let y_of = |b: &DeltaBar| {
                let row = metrics.iter().position(|m| *m == b.metric).unwrap_or(0) as f64;
                n - row - 0.5 - (v as f64 - (per - 1.0) / 2.0) * 0.7 / per
            };
            let mine: Vec<&DeltaBar> = bars.iter().filter(|b| b.variant == v).collect();
            chart.draw_series(mine.iter().map(|b| {
                ErrorBar::new_horizontal(
                    y_of(b),
                    b.lo_pct,
                    b.mean_pct,
                    b.hi_pct,
                    color.stroke_width(2),
                    6,
                )
            }))?;
            chart
                .draw_series(
                    mine.iter()
                        .map(|b| Circle::new((b.mean_pct, y_of(b)), 3, color.filled())),
                )?
                .label(name.as_str())
                .legend(move |(x, y)| Circle::new((x + 6, y), 4, color.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// A named series of `(mean, ci95 half-width)` per x position (`None`: no value there).
pub type CiLine = (String, Vec<Option<(f64, f64)>>);

/// One line per series over categorical x positions (`x_labels`), each point a mean with a
/// vertical 95% CI error bar; `None` where a series has no value at that position.
pub fn category_lines(
    caption: &str,
    x_desc: &str,
    y_desc: &str,
    x_labels: &[String],
    lines: &[CiLine],
) -> String {
    let Some((lo, hi)) = ci_y_range(lines).filter(|_| !x_labels.is_empty()) else {
        return "<p class=\"note\">no value to draw</p>".to_string();
    };
    let n = x_labels.len() as f64;
    svg(900, 360, |root| {
        let mut chart =
            chart_on(root, caption, 15, (40, 72)).build_cartesian_2d(-0.5..n - 0.5, lo..hi)?;
        let xfmt = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 0.01 && (0.0..n).contains(&i) {
                x_labels[i as usize].clone()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(x_labels.len() * 2 + 1)
            .x_label_formatter(&xfmt)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style((FONT, 11))
            .light_line_style(WHITE)
            .draw()?;
        let k = lines.len().max(1) as f64;
        for (s, (name, v)) in lines.iter().enumerate() {
            let color = series(s);
            // Series side by side within a position so their bars do not hide each other.
            let dx = (s as f64 - (k - 1.0) / 2.0) * 0.25 / k;
            let mine = ci_points(v, dx);
            chart.draw_series(LineSeries::new(
                mine.iter().map(|&(x, m, _)| (x, m)),
                color.stroke_width(2),
            ))?;
            chart.draw_series(mine.iter().map(|&(x, m, c)| {
                ErrorBar::new_vertical(x, m - c, m, m + c, color.stroke_width(2), 8)
            }))?;
            chart
                .draw_series(
                    mine.iter()
                        .map(|&(x, m, _)| Circle::new((x, m), 4, color.filled())),
                )?
                .label(name.as_str())
                .legend(move |(x, y)| Circle::new((x + 6, y), 4, color.filled()));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        Ok(())
    })
}

/// The y range of [`category_lines`]: every finite point's CI, zero included, padded by 8%
/// (`None` without a finite point); separate as the chart's scale decision.
fn ci_y_range(lines: &[CiLine]) -> Option<(f64, f64)> {
    let pts = || {
        lines
            .iter()
            .flat_map(|(_, v)| v.iter().flatten())
            .filter(|(m, c)| m.is_finite() && c.is_finite())
    };
    pts().next()?;
    let lo = pts()
        .map(|(m, c)| m - c)
        .fold(f64::INFINITY, f64::min)
        .min(0.0);
    let hi = pts()
        .map(|(m, c)| m + c)
        .fold(f64::NEG_INFINITY, f64::max)
        .max(0.0);
    let pad = if hi > lo { (hi - lo) * 0.08 } else { 1.0 };
    Some((lo - pad, hi + pad))
}

/// One series' finite points as `(x, mean, ci95)`, x shifted by `dx` within its position;
/// separate as the data step of each series [`category_lines`] draws.
fn ci_points(v: &[Option<(f64, f64)>], dx: f64) -> Vec<(f64, f64, f64)> {
    v.iter()
        .enumerate()
        .filter_map(|(i, p)| p.map(|(m, c)| (i as f64 + dx, m, c)))
        .filter(|(_, m, c)| m.is_finite() && c.is_finite())
        .collect()
}

/// One CDF line: its name and `(x, cumulative fraction)` points in x order (x > 0).
pub type CdfLine = (String, Vec<(f64, f64)>);

/// CDFs on a log x axis (`x_desc`, e.g. µs), one line per series (variants overlaid), drawn
/// as steps; y is the fraction of samples at or below x.
pub fn cdf(caption: &str, x_desc: &str, lines: &[CdfLine]) -> String {
    let xs = lines.iter().flat_map(|(_, v)| v.iter().map(|p| p.0));
    let lo = xs
        .clone()
        .filter(|x| *x > 0.0)
        .fold(f64::INFINITY, f64::min);
    let hi = xs.fold(0.0f64, f64::max);
    if !lo.is_finite() || hi <= 0.0 {
        return "<p class=\"note\">no samples</p>".to_string();
    }
    let (lo, hi) = log_span(lo, hi, 1.2);
    svg(460, 300, |root| {
        let mut chart = chart_on(root, caption, 15, (36, 48))
            .build_cartesian_2d((lo..hi).log_scale(), 0.0..1.02)?;
        // Label the powers of ten only (a narrow log span otherwise crowds its labels).
        let xfmt = |x: &f64| {
            let l = x.log10();
            if (l - l.round()).abs() < 1e-6 {
                format!("{}", 10f64.powi(l.round() as i32))
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .x_label_formatter(&xfmt)
            .x_desc(x_desc)
            .y_desc("fraction ≤ x")
            .label_style((FONT, 11))
            .light_line_style(WHITE)
            .draw()?;
        for (i, (name, pts)) in lines.iter().enumerate() {
            let color = series(i);
            let mut steps = Vec::with_capacity(pts.len() * 2 + 1);
            let mut prev = 0.0;
            for &(x, y) in pts.iter().filter(|p| p.0 > 0.0) {
                steps.push((x.max(lo), prev));
                steps.push((x.max(lo), y));
                prev = y;
            }
            steps.push((hi, prev));
            draw_line(&mut chart, name, steps, color, 2)?;
        }
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// Lines over simulated time with explicit sample times (s); `y_desc` names y and its unit.
pub fn lines_at(
    caption: &str,
    y_desc: &str,
    time_s: &[f64],
    lines: &[(String, Vec<f64>)],
) -> String {
    let y_max = value_max(lines);
    let x_max = time_s.iter().copied().fold(0.0f64, f64::max);
    if y_max <= 0.0 || x_max <= 0.0 {
        return "<p class=\"note\">nothing to draw over time</p>".to_string();
    }
    let axis = TimeAxis {
        width_px: 700,
        x_desc: "simulated time (s)",
        x_max,
    };
    // Past the palette, colours repeat: the repeats are drawn thinner.
    let drawn = lines.iter().enumerate().map(|(i, (name, v))| {
        let pts = time_s.iter().copied().zip(v.iter().copied()).collect();
        let width = if i >= palette::OKABE_ITO.len() { 1 } else { 2 };
        (name.as_str(), pts, width)
    });
    time_lines(caption, y_desc, &axis, y_max, drawn)
}
