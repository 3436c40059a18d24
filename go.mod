module github.com/cnperf/cnperf

go 1.26.8

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0
	golang.org/x/sys v0.49.0
)

require github.com/cilium/ebpf v0.22.0
