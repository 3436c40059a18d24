package backend

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/cnperf/cnperf/internal/agent"
	"github.com/cnperf/cnperf/internal/workload"
)

// ProbeService checks, before anything is measured, that a few short
// connections (tcp_crr, 200 ms) from client through a service at addr
// complete with every backend serving on port: a network and a balancer
// that cannot work together are reported in seconds with the reason,
// rather than as every measurement timing out. hang is the error's text
// when the connections never complete.
func ProbeService(ctx context.Context, client *agent.Client, backends []*agent.Client, addr netip.AddrPort, port int, hang string) error {
	params := workload.Params{Duration: 200 * time.Millisecond, MessageSize: 16, Port: port}
	var servers []*agent.Server
	defer func() {
		for _, srv := range servers {
			_, _ = srv.Stop()
		}
	}()
	for _, a := range backends {
		srv, err := a.Serve(ctx, "tcp_crr", params)
		if err != nil {
			return err
		}
		servers = append(servers, srv)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rep, err := client.Run(rctx, "tcp_crr", params, addr)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return errors.New(hang)
		}
		return err
	}
	if rep.Transactions == 0 {
		return fmt.Errorf("no connection completed (%d failed)", rep.Errors)
	}
	return nil
}
