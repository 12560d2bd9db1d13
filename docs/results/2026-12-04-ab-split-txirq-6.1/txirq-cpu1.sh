for n in $(awk '/output\.0/ {sub(":","",$1); print $1}' /proc/interrupts); do echo 2 > /proc/irq/$n/smp_affinity; echo "txirq $n -> $(cat /proc/irq/$n/effective_affinity_list)"; done
