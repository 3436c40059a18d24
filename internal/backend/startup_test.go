package backend

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// TestFirstReplyNoPeer: without a peer the sample is the pod's creation
// alone; the probe with one is tested where namespaces are made
// (labbackend's, docker's and dockerlab's root tests).
func TestFirstReplyNoPeer(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := StartupSample{Phases: map[string]time.Duration{"links": time.Millisecond}}
	if err := s.FirstReply(context.Background(), "unused", netip.Addr{}, t0, t0.Add(7*time.Millisecond), time.Second); err != nil {
		t.Fatal(err)
	}
	if !s.NoPeer || s.Total != 7*time.Millisecond || s.Path != "" || len(s.Phases) != 1 {
		t.Errorf("sample %+v: want NoPeer, Total 7ms, no path, no first_packet phase", s)
	}
}
