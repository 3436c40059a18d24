package ping

import "testing"

func TestEchoRequest(t *testing.T) {
	b := EchoRequest(0x1234, 7)
	if b[0] != 8 || b[4] != 0x12 || b[5] != 0x34 || b[7] != 7 {
		t.Fatalf("bad header % x", b[:8])
	}
	if Checksum(b) != 0 { // a correct checksum sums to zero
		t.Fatalf("checksum does not verify: % x", b)
	}
	// an IPv4 header (20 bytes) then an echo reply to id 0x1234
	reply := append(make([]byte, 20), b...)
	reply[0], reply[20] = 0x45, 0
	if !IsEchoReply(reply, 0x1234) || IsEchoReply(reply, 0x1235) {
		t.Fatal("echo reply not recognized by id")
	}
	reply[20] = 8
	if IsEchoReply(reply, 0x1234) {
		t.Fatal("echo request taken for a reply")
	}
	if IsEchoReply(reply[:24], 0x1234) {
		t.Fatal("truncated packet accepted")
	}
}

func TestIDsDiffer(t *testing.T) {
	seen := map[uint16]bool{}
	for i := 0; i < 1000; i++ {
		id := nextID()
		if seen[id] {
			t.Fatalf("identifier %#x handed out twice in %d probes", id, i+1)
		}
		seen[id] = true
	}
}
