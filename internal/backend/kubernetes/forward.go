package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	streamhttp "k8s.io/streaming/pkg/httpstream"
)

// Forwarder reaches a TCP port on 127.0.0.1 inside a pod's network
// namespace from this process.
type Forwarder interface {
	Forward(ctx context.Context, namespace, pod string, port int) (Tunnel, error)
}

// Tunnel is a forwarded port: connections to Addr (on this machine's
// loopback) are carried to it.
type Tunnel interface {
	Addr() string
	LastError() error // the last connection's failure, for messages
	Close()
}

// apiForwarder forwards through the API server (pods/portforward), as
// `kubectl port-forward` does: WebSocket first, SPDY where the server has
// no WebSocket port-forward.
type apiForwarder struct {
	cfg *rest.Config
	rc  rest.Interface
}

func (f *apiForwarder) dialer(u *url.URL) (httpstream.Dialer, error) {
	tr, up, err := spdy.RoundTripperFor(f.cfg)
	if err != nil {
		return nil, err
	}
	d := spdy.NewDialer(up, &http.Client{Transport: tr}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, f.cfg)
	if err != nil {
		return nil, err
	}
	// the WebSocket transport reports k8s.io/streaming's upgrade failure
	// (apimachinery's twin is not the same type), as kubectl checks
	return portforward.NewFallbackDialer(ws, d, func(err error) bool {
		return streamhttp.IsUpgradeFailure(err) || streamhttp.IsHTTPSProxyError(err) || httpstream.IsUpgradeFailure(err)
	}), nil
}

// Forward implements Forwarder. Unlike client-go's PortForwarder, a
// refused connection inside the pod (the agent not listening yet) fails
// that connection only, and a lost tunnel is dialled again on the next
// connection, so the coordinator can wait for an agent by retrying.
func (f *apiForwarder) Forward(ctx context.Context, namespace, pod string, port int) (Tunnel, error) {
	u := f.rc.Post().Resource("pods").Namespace(namespace).Name(pod).SubResource("portforward").URL()
	d, err := f.dialer(u)
	if err != nil {
		return nil, fmt.Errorf("port-forward to pod %s: %w", pod, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &tunnel{dial: d, port: port, ln: ln}
	go t.serve()
	return t, nil
}

// Addr implements Tunnel.
func (t *tunnel) Addr() string { return t.ln.Addr().String() }

// tunnel is one pod port forwarded to a local listener.
type tunnel struct {
	dial httpstream.Dialer
	port int
	ln   net.Listener

	mu      sync.Mutex
	conn    httpstream.Connection
	reqID   int
	closed  bool
	lastErr error
	wg      sync.WaitGroup
}

func (t *tunnel) serve() {
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.wg.Add(1)
		go func() {
			defer t.wg.Done()
			if err := t.handle(c); err != nil {
				t.mu.Lock()
				t.lastErr = err
				t.mu.Unlock()
			}
		}()
	}
}

// LastError implements Tunnel.
func (t *tunnel) LastError() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.lastErr
}

func (t *tunnel) connection() (httpstream.Connection, int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, 0, errors.New("forward closed")
	}
	if t.conn != nil {
		select {
		case <-t.conn.CloseChan():
			t.conn = nil
		default:
		}
	}
	if t.conn == nil {
		c, proto, err := t.dial.Dial(portforward.PortForwardProtocolV1Name)
		if err != nil {
			return nil, 0, err
		}
		if proto != portforward.PortForwardProtocolV1Name {
			c.Close()
			return nil, 0, fmt.Errorf("port-forward: the server speaks %q, not %q", proto, portforward.PortForwardProtocolV1Name)
		}
		t.conn = c
	}
	t.reqID++
	return t.conn, t.reqID, nil
}

// handle carries one local connection over a pair of streams (error,
// data), as the port-forward protocol has it.
func (t *tunnel) handle(local net.Conn) error {
	defer local.Close()
	conn, id, err := t.connection()
	if err != nil {
		return err
	}
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, strconv.Itoa(t.port))
	h.Set(corev1.PortForwardRequestIDHeader, strconv.Itoa(id))
	errStream, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return err
	}
	errStream.Close() // nothing is written to it
	defer conn.RemoveStreams(errStream)
	errc := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(errStream)
		errc <- string(b)
	}()
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(h)
	if err != nil {
		conn.Close()
		return err
	}
	defer conn.RemoveStreams(data)
	remoteDone := make(chan struct{})
	localDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(local, data)
		close(remoteDone)
	}()
	go func() {
		defer data.Close() // no more from us
		if _, err := io.Copy(data, local); err != nil {
			close(localDone)
		}
	}()
	select {
	case <-remoteDone:
	case <-localDone:
	}
	_ = data.Reset()
	if msg := <-errc; msg != "" {
		return errors.New(oneLine(msg))
	}
	return nil
}

// Close implements Tunnel.
func (t *tunnel) Close() {
	t.mu.Lock()
	t.closed = true
	c := t.conn
	t.conn = nil
	t.mu.Unlock()
	t.ln.Close()
	if c != nil {
		c.Close()
	}
	t.wg.Wait()
}
