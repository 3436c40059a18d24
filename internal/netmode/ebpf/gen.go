package ebpf

//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -target bpfel -type endpoint -type config datapath datapath.c -- -O2 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu
