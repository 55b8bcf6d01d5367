/*
 * schedlab kernel_diff shim (MIT OR Apache-2.0): detach_tasks()'s environment: the
 * source's cfs_tasks list (our list helpers), the task's h_load, util_est and fit (per
 * task, from the case), detach_task() as the list and nr_running see it, SCHED_NR_MIGRATE_BREAK
 * without PREEMPT_RT; no CONFIG_PREEMPTION.
 */
#define BITS_PER_TYPE(t) (sizeof(t) * 8)
#define SCHED_NR_MIGRATE_BREAK 32
#define schedstat_add(var, v) ((void)(v))
#define container_of(ptr, type, member) ((type *)((char *)(ptr) - offsetof(type, member)))
#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
static inline void INIT_LIST_HEAD(struct list_head *l) { l->next = l->prev = l; }
static inline int list_empty(const struct list_head *h) { return h->next == h; }
static inline void kd_list_del(struct list_head *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}
static inline void list_add(struct list_head *n, struct list_head *h)
{
	n->next = h->next;
	n->prev = h;
	h->next->prev = n;
	h->next = n;
}
static inline void list_add_tail(struct list_head *n, struct list_head *h)
{
	list_add(n, h->prev);
}
static inline void list_move(struct list_head *e, struct list_head *h)
{
	kd_list_del(e);
	list_add(e, h);
}
#define task_h_load(p) ((p)->kd_h_load)
#define task_util_est(p) ((p)->kd_util)
#define task_fits_cpu(p, cpu) ((p)->kd_fits)
static void detach_task(struct task_struct *p, struct lb_env *env)
{
	kd_list_del(&p->se.group_node);
	env->src_rq->nr_running--;
	p->kd_detached = 1;
}
