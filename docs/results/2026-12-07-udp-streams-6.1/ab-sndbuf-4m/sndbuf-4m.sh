sysctl -w net.core.wmem_default=4194304 net.core.wmem_max=4194304
