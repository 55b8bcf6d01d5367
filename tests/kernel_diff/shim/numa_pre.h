/* schedlab kernel_diff shim (MIT OR Apache-2.0): what numa_classify(), load_too_imbalanced()
 * and the scan-period functions (task_nr_scan_windows(), task_scan_min/start/max(),
 * update_task_scan_period()) need beyond their structs: the task's NUMA fields, its mm's RSS
 * and next-scan time, its group's refcount and fault sums (group_faults_priv/shared() as sums
 * the wrapper passes), the scan sysctls, and jiffies at 0 with HZ = 1000; for the node
 * scores (task_weight(), group_weight(), score_nearby_nodes(), init_numa_topology_type()):
 * the nodes (all online, all with CPUs) and their distance table, set per case; for
 * task_numa_compare() and task_numa_find_cpu() (numa_cmp.h): the tasks' affinity,
 * preferred node, task_h_load() and PF_EXITING. */
#define abs(x) ((x) < 0 ? -(x) : (x))
#define PAGE_SHIFT 12
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
struct mm_struct {
	unsigned long numa_next_scan;
	unsigned long kd_rss;
};
struct numa_group {
	unsigned int refcount;
	unsigned long kd_priv, kd_shared;
	unsigned long total_faults;
	unsigned long *faults;
};
struct cpumask;
struct task_struct {
	/* task_numa_compare(), task_numa_find_cpu(), task_numa_assign() */
	unsigned int flags;
	const struct cpumask *cpus_ptr;
	int numa_preferred_nid;
	unsigned long kd_h_load;
	struct mm_struct *mm;
	struct numa_group *numa_group;
	unsigned long *numa_faults;
	unsigned long total_numa_faults;
	unsigned int numa_scan_period;
	unsigned int numa_scan_period_max;
	unsigned long numa_faults_locality[3];
};
static unsigned int sysctl_numa_balancing_scan_size = 256;
static unsigned int sysctl_numa_balancing_scan_period_min = 1000;
static unsigned int sysctl_numa_balancing_scan_period_max = 60000;
static unsigned long jiffies;
#define msecs_to_jiffies(ms) ((unsigned long)(ms))
#define get_mm_rss(mm) ((mm)->kd_rss)
#define refcount_read(r) (*(r))
#define rcu_read_lock() ((void)0)
#define rcu_read_unlock() ((void)0)
#define rcu_dereference(p) (p)
#define deref_curr_numa_group(p) ((p)->numa_group)
#define deref_task_numa_group(p) ((p)->numa_group)
static inline unsigned long group_faults_priv(struct numa_group *ng) { return ng->kd_priv; }
static inline unsigned long group_faults_shared(struct numa_group *ng) { return ng->kd_shared; }
#define LOCAL_DISTANCE 10
#define KD_MAX_NODES 8
#define NUMA_NO_NODE (-1)
#define N_CPU 0
static int kd_nr_nodes = 1;
static int kd_dist[KD_MAX_NODES][KD_MAX_NODES];
#define nr_node_ids kd_nr_nodes
#define node_distance(a, b) (kd_dist[a][b])
#define for_each_online_node(n) for ((n) = 0; (n) < kd_nr_nodes; (n)++)
#define for_each_node_state(n, state) for_each_online_node(n)
#define pr_err(...) ((void)0)
static int sched_max_numa_distance;
static int sched_domains_numa_levels;
