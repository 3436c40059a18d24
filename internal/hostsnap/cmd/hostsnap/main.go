// Command hostsnap brackets the root test suite (scripts/test.sh):
//
//	hostsnap save FILE      snapshot the host namespace into FILE
//	hostsnap compare FILE   snapshot again; exit 1 listing what changed
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cnperf/cnperf/internal/hostsnap"
)

func main() {
	if len(os.Args) != 3 || (os.Args[1] != "save" && os.Args[1] != "compare") {
		fmt.Fprintln(os.Stderr, "usage: hostsnap save|compare FILE")
		os.Exit(2)
	}
	path := os.Args[2]
	if os.Args[1] == "save" {
		b, _ := json.Marshal(hostsnap.Take())
		if err := os.WriteFile(path, b, 0o600); err != nil {
			fmt.Fprintln(os.Stderr, "hostsnap:", err)
			os.Exit(1)
		}
		return
	}
	b, err := os.ReadFile(path)
	var before hostsnap.Snapshot
	if err == nil {
		err = json.Unmarshal(b, &before)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostsnap: reading the snapshot before:", err)
		os.Exit(1)
	}
	diff := hostsnap.Diff(before, hostsnap.Take())
	if len(diff) == 0 {
		fmt.Println("hostsnap: the host namespace is as it was before the tests")
		return
	}
	fmt.Fprintf(os.Stderr, "hostsnap: the tests changed the host namespace (%d lines):\n", len(diff))
	for _, l := range diff {
		fmt.Fprintln(os.Stderr, "  "+l)
	}
	os.Exit(1)
}
