// SPDX-License-Identifier: GPL-2.0-only
/*
 * vnet_fault: test-only fault injection for the test harness.
 *
 * A kprobe on the entry of the kernel function @func acts on its next
 * @times calls (those from a function in the list @caller, when set, and
 * not from one in the list @caller_not, and when @arg is set, those whose
 * argument number @arg, counted from 0, equals @arg_value), after letting
 * @skip of them pass:
 *  - by default the call fails with @error without running: the handler
 *    sets the return value and resumes at a function that only returns,
 *    so @func's caller sees the error.  Meant for functions whose failure
 *    leaves nothing behind (their first act is an allocation that could
 *    fail).  Debian's kernels have no CONFIG_FUNCTION_ERROR_INJECTION,
 *    which offers the same for functions marked for it;
 *  - with @delay_ms, the call runs after a sleep of that long, which holds
 *    its caller at that point (e.g. with a NAPI instance disabled) so that
 *    a test can make another path meet it there.  The handler resumes at
 *    a detour that sleeps and then calls @func with the same arguments
 *    (at most six, in registers: x86-64) and returns its result.  Only
 *    for callers that may sleep;
 *  - with @out_arg (0-5), the call runs, and when it returns non-zero
 *    the u32 that its argument number @out_arg points to is set to
 *    @out_value (a kretprobe), as if the function had written it: a
 *    device's report (a used length, say) made malformed.  Calls with a
 *    zero return are not counted.
 *
 *   insmod vnet_fault.ko func=vnet_vqs_init times=1 error=-12
 *   insmod vnet_fault.ko func=vnet_rx_fill caller=vnet_refill_work delay_ms=500
 *   insmod vnet_fault.ko func=vnet_qp_timer_request_at arg=1 arg_value=1 error=0
 *   insmod vnet_fault.ko func=virtqueue_get_buf_ctx caller=vnet_rx_receive \
 *          out_arg=1 out_value=70000 skip=200 times=20
 *   cat /sys/module/vnet_fault/parameters/injected
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/compiler.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>

static char *func = "vnet_vqs_init";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "Function to act on");

static char *caller = "";
module_param(caller, charp, 0444);
MODULE_PARM_DESC(caller, "Only calls from these functions, comma-separated (default: any)");

static char *caller_not = "";
module_param(caller_not, charp, 0444);
MODULE_PARM_DESC(caller_not, "Never calls from these functions, comma-separated (default: none)");

static int arg = -1;
module_param(arg, int, 0444);
MODULE_PARM_DESC(arg, "Only calls whose argument number arg (0-5) is arg_value (default -1: any)");

static int arg_value;
module_param(arg_value, int, 0444);
MODULE_PARM_DESC(arg_value, "Value of that argument (an int or enum)");

static int skip;
module_param(skip, int, 0444);
MODULE_PARM_DESC(skip, "Calls to let pass first");

static int times = 1;
module_param(times, int, 0444);
MODULE_PARM_DESC(times, "How many calls to act on");

static int error = -ENOMEM;
module_param(error, int, 0444);
MODULE_PARM_DESC(error, "Return value of a failed call");

static int delay_ms;
module_param(delay_ms, int, 0444);
MODULE_PARM_DESC(delay_ms, "Delay the calls by this long instead of failing them");

static int out_arg = -1;
module_param(out_arg, int, 0444);
MODULE_PARM_DESC(out_arg, "Overwrite the u32 this argument (0-5) points to after the call (default -1: fail or delay instead)");

static unsigned int out_value;
module_param(out_value, uint, 0444);
MODULE_PARM_DESC(out_value, "The value written there");

static int injected;
module_param(injected, int, 0444);
MODULE_PARM_DESC(injected, "Calls acted on so far (counted when the action starts)");

static int vnet_fault_pre(struct kprobe *p, struct pt_regs *regs);
static void vnet_fault_post(struct kprobe *p, struct pt_regs *regs,
			    unsigned long flags);

static struct kprobe vnet_fault_kp = {
	.pre_handler = vnet_fault_pre,
	.post_handler = vnet_fault_post,
};

static atomic_t vnet_fault_skip;
static atomic_t vnet_fault_left;
/* The task in the detour, whose own call of @func must go through. */
static struct task_struct *vnet_fault_detour_task;

/* Resuming here returns to the probed function's caller. */
static noinline void vnet_fault_return(void)
{
	barrier();
}

/* Whether @name (@len characters) is in the comma-separated @list. */
static bool vnet_fault_listed(const char *list, const char *name, size_t len)
{
	size_t n;

	while (*list) {
		n = strcspn(list, ",");
		if (n == len && !strncmp(name, list, n))
			return true;
		list += n;
		if (*list)
			list++;
	}
	return false;
}

/*
 * At the entry of @func the stack pointer points at the return address.
 * Its symbol prints as "name" or, in a module, "name [module]".
 */
static bool vnet_fault_caller_matches(struct pt_regs *regs)
{
	char name[KSYM_SYMBOL_LEN];
	size_t len;

	if (!*caller && !*caller_not)
		return true;
	snprintf(name, sizeof(name), "%ps",
		 (void *)regs_get_kernel_stack_nth(regs, 0));
	len = strcspn(name, " ");
	if (vnet_fault_listed(caller_not, name, len))
		return false;
	return !*caller || vnet_fault_listed(caller, name, len);
}

typedef long (*vnet_fault_fn)(long, long, long, long, long, long);

/* Entered in place of @func, with its arguments and return address. */
static noinline long vnet_fault_detour(long a0, long a1, long a2, long a3,
				       long a4, long a5)
{
	vnet_fault_fn fn = (vnet_fault_fn)vnet_fault_kp.addr;
	long ret;

	msleep(delay_ms);
	WRITE_ONCE(vnet_fault_detour_task, current);
	ret = fn(a0, a1, a2, a3, a4, a5);
	WRITE_ONCE(vnet_fault_detour_task, NULL);
	return ret;
}

/*
 * At the entry of @func its arguments are still in their registers; an
 * int argument is the low half of its register (the rest is undefined).
 */
static bool vnet_fault_arg_matches(struct pt_regs *regs)
{
	return arg < 0 ||
	       (int)regs_get_kernel_argument(regs, arg) == arg_value;
}

static int vnet_fault_pre(struct kprobe *p, struct pt_regs *regs)
{
	if (READ_ONCE(vnet_fault_detour_task) == current ||
	    !vnet_fault_arg_matches(regs) ||
	    !vnet_fault_caller_matches(regs) ||
	    atomic_dec_if_positive(&vnet_fault_skip) >= 0 ||
	    atomic_dec_if_positive(&vnet_fault_left) < 0)
		return 0;
	WRITE_ONCE(injected, READ_ONCE(injected) + 1);
	if (delay_ms) {
		instruction_pointer_set(regs, (unsigned long)vnet_fault_detour);
	} else {
		regs_set_return_value(regs, (unsigned long)(long)error);
		instruction_pointer_set(regs, (unsigned long)vnet_fault_return);
	}
	/* Non-zero: the handler moved the instruction pointer. */
	return 1;
}

/*
 * out_arg mode.  At the entry (before the return is hooked, so the
 * return address is still the caller's) keep the pointer if the call is
 * one to act on; at the return, write through it.
 */
static int vnet_fault_out_entry(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	if (!vnet_fault_arg_matches(regs) || !vnet_fault_caller_matches(regs))
		return 1;
	*(u32 **)ri->data = (u32 *)regs_get_kernel_argument(regs, out_arg);
	return 0;
}

static int vnet_fault_out_ret(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	u32 *out = *(u32 **)ri->data;

	if (!regs_return_value(regs) || !out ||
	    atomic_dec_if_positive(&vnet_fault_skip) >= 0 ||
	    atomic_dec_if_positive(&vnet_fault_left) < 0)
		return 0;
	WRITE_ONCE(injected, READ_ONCE(injected) + 1);
	WRITE_ONCE(*out, out_value);
	return 0;
}

static struct kretprobe vnet_fault_krp = {
	.entry_handler = vnet_fault_out_entry,
	.handler = vnet_fault_out_ret,
	.data_size = sizeof(u32 *),
	.maxactive = 64,
};

/*
 * Never runs for an injected call; its presence makes the kprobe one
 * that may change the instruction pointer (IPMODIFY with ftrace) and
 * keeps it from being optimized into a jump.
 */
static void vnet_fault_post(struct kprobe *p, struct pt_regs *regs,
			    unsigned long flags)
{
}

static int __init vnet_fault_init(void)
{
	int err;

	if (arg > 5 || out_arg > 5) {
		pr_err("arg=%d out_arg=%d: only the six register arguments (0-5)\n",
		       arg, out_arg);
		return -EINVAL;
	}
	atomic_set(&vnet_fault_skip, skip);
	atomic_set(&vnet_fault_left, times);
	if (out_arg >= 0) {
		vnet_fault_krp.kp.symbol_name = func;
		err = register_kretprobe(&vnet_fault_krp);
		if (err) {
			pr_err("cannot probe the return of %s: %d\n", func, err);
			return err;
		}
		pr_info("the next %d calls of %s return with *arg%d = %u\n",
			times, func, out_arg, out_value);
		return 0;
	}
	vnet_fault_kp.symbol_name = func;
	err = register_kprobe(&vnet_fault_kp);
	if (err) {
		pr_err("cannot probe %s: %d\n", func, err);
		return err;
	}
	if (delay_ms)
		pr_info("delaying the next %d calls of %s by %d ms\n", times,
			func, delay_ms);
	else
		pr_info("the next %d calls of %s return %d\n", times, func,
			error);
	return 0;
}

static void __exit vnet_fault_exit(void)
{
	if (out_arg >= 0)
		unregister_kretprobe(&vnet_fault_krp);
	else
		unregister_kprobe(&vnet_fault_kp);
	pr_info("%s: acted on %d calls\n", func, injected);
}

module_init(vnet_fault_init);
module_exit(vnet_fault_exit);

MODULE_DESCRIPTION("vnet test harness: make a kernel function fail (test only)");
MODULE_LICENSE("GPL");
