package main

import (
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		ok       bool
		out, rec string
		notInOut string
	}{
		{
			name: "pass and a skip with its reason",
			in: `{"Action":"start","Package":"p"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"    a_test.go:9: needs CONFIG_IPVLAN; this kernel lacks it\n"}
{"Action":"output","Package":"p","Test":"TestA","Output":"--- SKIP: TestA (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA","Elapsed":0}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: a log line of a passing test\n"}
{"Action":"pass","Package":"p","Test":"TestB","Elapsed":0.5}
{"Action":"output","Package":"p","Output":"PASS\n"}
{"Action":"output","Package":"p","Output":"ok  \tp\t1.234s\n"}
{"Action":"pass","Package":"p","Elapsed":1.234}
`,
			ok:  true,
			out: "ok  \tp\t1.234s\n",
			rec: "skip\tp\tTestA\ta_test.go:9: needs CONFIG_IPVLAN; this kernel lacks it\n" +
				"test\tp\tTestA\tskip\t0.0\ntest\tp\tTestB\tpass\t0.5\npackage\tp\tpass\t1.2\n",
			notInOut: "passing test",
		},
		{
			name: "a failed subtest shows its output and its parent's",
			in: `{"Action":"output","Package":"q","Test":"TestC/x","Output":"    c_test.go:5: got 1, want 2\n"}
{"Action":"output","Package":"q","Test":"TestC/x","Output":"    --- FAIL: TestC/x (0.00s)\n"}
{"Action":"fail","Package":"q","Test":"TestC/x"}
{"Action":"output","Package":"q","Test":"TestC/y","Output":"    c_test.go:5: fine\n"}
{"Action":"pass","Package":"q","Test":"TestC/y"}
{"Action":"output","Package":"q","Test":"TestC","Output":"--- FAIL: TestC (0.00s)\n"}
{"Action":"fail","Package":"q","Test":"TestC"}
{"Action":"output","Package":"q","Output":"FAIL\n"}
{"Action":"output","Package":"q","Output":"FAIL\tq\t0.010s\n"}
{"Action":"fail","Package":"q","Elapsed":0.01}
`,
			out:      "    c_test.go:5: got 1, want 2\n    --- FAIL: TestC/x (0.00s)\n--- FAIL: TestC (0.00s)\nFAIL\nFAIL\tq\t0.010s\n",
			rec:      "test\tq\tTestC/x\tfail\t0.0\ntest\tq\tTestC/y\tpass\t0.0\ntest\tq\tTestC\tfail\t0.0\npackage\tq\tfail\t0.0\n",
			notInOut: "fine",
		},
		{
			name: "a build error",
			in: `{"ImportPath":"r [r.test]","Action":"build-output","Output":"r/r.go:3:1: syntax error\n"}
{"ImportPath":"r [r.test]","Action":"build-fail"}
{"Action":"output","Package":"r","Output":"FAIL\tr [build failed]\n"}
{"Action":"fail","Package":"r","Elapsed":0}
`,
			out: "r/r.go:3:1: syntax error\nFAIL\tr [build failed]\n",
			rec: "package\tr\tfail\t0.0\n",
		},
		{
			name: "a package cut short (go test killed) fails",
			in: `{"Action":"output","Package":"s","Test":"TestD","Output":"    d_test.go:1: still running\n"}
`,
			out: "    d_test.go:1: still running\n",
		},
		{
			name: "a line that is not an event is passed on",
			in:   "go: no such package\n",
			ok:   true,
			out:  "go: no such package\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, rec strings.Builder
			ok := summarize(strings.NewReader(tc.in), &out, &rec)
			if ok != tc.ok {
				t.Errorf("ok = %v, want %v", ok, tc.ok)
			}
			if out.String() != tc.out {
				t.Errorf("output:\n%q\nwant\n%q", out.String(), tc.out)
			}
			if rec.String() != tc.rec {
				t.Errorf("record:\n%q\nwant\n%q", rec.String(), tc.rec)
			}
			if tc.notInOut != "" && strings.Contains(out.String(), tc.notInOut) {
				t.Errorf("output shows %q: %q", tc.notInOut, out.String())
			}
		})
	}
}
