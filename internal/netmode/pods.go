package netmode

import (
	"context"
	"fmt"

	"github.com/cnperf/cnperf/internal/lab"
)

// PodReq asks for pod Name on Host.
type PodReq struct {
	Host *lab.Host
	Name string
}

// AddPods builds the pods of reqs with mode m, up to l.Cfg.Workers at once,
// and returns them in the order asked. Each pod gets the address it would
// have got had they been built one by one, in that order. A mode's AddPod
// must be safe to call concurrently (every mode's is: the lab's IPAM and
// each mode's own state are locked).
func AddPods(ctx context.Context, m Mode, l *lab.Lab, reqs []PodReq) ([]*lab.Pod, error) {
	byHost := map[*lab.Host][]string{}
	var hosts []*lab.Host
	for _, r := range reqs {
		if _, ok := byHost[r.Host]; !ok {
			hosts = append(hosts, r.Host)
		}
		byHost[r.Host] = append(byHost[r.Host], r.Name)
	}
	for _, h := range hosts {
		if err := h.Reserve(byHost[h]...); err != nil {
			return nil, err
		}
	}
	pods := make([]*lab.Pod, len(reqs))
	err := l.Each(ctx, len(reqs), func(ctx context.Context, i int) error {
		p, err := m.AddPod(ctx, l, reqs[i].Host, reqs[i].Name)
		if err != nil {
			return fmt.Errorf("adding pod %s: %w", reqs[i].Name, err)
		}
		pods[i] = p
		return nil
	})
	if err != nil {
		return nil, err
	}
	return pods, nil
}
