#!/bin/sh
# variant setup (bench/matrix.py --ours-b-setup): threaded NAPI
echo 1 > "/sys/class/net/$IF/threaded"
