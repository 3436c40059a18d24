package bpfmaps

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/cnperf/cnperf/internal/svc"
)

// The maps hold addresses and ports in network order, as bpf_sock_addr's
// user_ip4/user_port and the IP header do: the bytes in memory must read
// 10.96.0.10 and 0x0050 whatever the host's byte order.
func TestKeyByteOrder(t *testing.T) {
	k := Key(svc.Service{VIP: netip.MustParseAddr("10.96.0.10"), Port: 80, Proto: "tcp"})
	var ip [4]byte
	binary.NativeEndian.PutUint32(ip[:], k.VIP)
	if ip != [4]byte{10, 96, 0, 10} {
		t.Errorf("VIP bytes %v", ip)
	}
	var port [2]byte
	binary.NativeEndian.PutUint16(port[:], k.Port)
	if port != [2]byte{0, 80} {
		t.Errorf("port bytes %v", port)
	}
	if k.Proto != 6 || Proto("udp") != 17 {
		t.Errorf("protocols %d %d", k.Proto, Proto("udp"))
	}
}
