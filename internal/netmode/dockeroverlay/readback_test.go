package dockeroverlay

import (
	"context"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
)

// TestReadBack feeds the hosts' etcd reads a registered endpoint (no root:
// the lab records commands and answers the reads) and checks that only the
// remote host programs it, once.
func TestReadBack(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	ep := `{"name":"c1","ip":"10.244.1.2/16","mac":"02:42:0a:f4:01:02","vtep":"10.100.0.1"}`
	answer := `{"header":{"revision":3},"kvs":[{"key":"` + b64(KeyRoot+"endpoint/cnperf0/c1") + `","value":"` + b64(ep) + `"}]}`
	get := func(h string) string {
		return "ip netns exec cnperf-test-" + h + " etcdctl --endpoints http://10.100.0.254:2379 get --prefix " + KeyRoot + "endpoint/cnperf0/ -w json"
	}
	rec := &lab.Recorder{Outputs: map[string]string{get("h1"): answer, get("h2"): answer}}
	l, err := lab.New(lab.Config{ID: "test", Exec: rec, NoStateDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := &Mode{}
	if err := l.Create(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Setup(ctx, l); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"c1", "c9"} { // the second sync must not re-program c1
		if _, err := m.AddPod(ctx, l, l.Hosts[0], name); err != nil {
			t.Fatal(err)
		}
	}
	text := rec.Text()
	want := []string{
		"ip -n cnperf-test-h2-ov1 neigh add 10.244.1.2 lladdr 02:42:0a:f4:01:02 dev vxlan0 nud permanent",
		"bridge -n cnperf-test-h2-ov1 fdb add 02:42:0a:f4:01:02 dev vxlan0 dst 10.100.0.1 self permanent",
	}
	for _, w := range want {
		if n := strings.Count(text, w+"\n"); n != 1 {
			t.Errorf("%q issued %d times, want once", w, n)
		}
	}
	if strings.Contains(text, "cnperf-test-h1-ov1 neigh add") {
		t.Error("h1 programmed its own endpoint")
	}
}
