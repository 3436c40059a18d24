package ebpftc

//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -tags linux -target bpfel tc tc.c -- -O2 -g -Wall -I/usr/include/x86_64-linux-gnu
