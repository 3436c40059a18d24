package pmqos

import (
	"os"
	"testing"

	"github.com/cnperf/cnperf/internal/testutil"
)

func TestHoldAndRelease(t *testing.T) {
	testutil.NeedRoot(t, "it opens "+Path)
	if _, err := os.Stat(Path); err != nil {
		t.Skip(Path + " absent on this kernel")
	}
	release, err := Hold(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := Current(); got != 0 {
		release()
		t.Fatalf("while held, the bound is %d µs, want 0", got)
	}
	release()
	if got := Current(); got == 0 {
		t.Log("bound still 0 after release: another holder (tuned?) may hold it")
	}
}

func TestRange(t *testing.T) {
	if _, err := Hold(-1); err == nil {
		t.Fatal("negative latency accepted")
	}
}
