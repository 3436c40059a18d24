package etcd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Client talks to etcd's JSON gateway (/v3/kv/range, /v3/watch): all a
// daemon needs to learn leases and follow their changes, without pulling
// etcd's gRPC client into cnperf.
type Client struct {
	URL  string // http://IP:2379
	HTTP *http.Client
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func (c *Client) post(ctx context.Context, path string, body any) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(msg))
	}
	return resp, nil
}

// Range returns every key under prefix and the store's revision.
func (c *Client) Range(ctx context.Context, prefix string) ([]KV, int64, error) {
	resp, err := c.post(ctx, "/v3/kv/range", map[string]string{"key": b64(prefix), "range_end": b64(PrefixEnd(prefix))})
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	var r rangeResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, 0, fmt.Errorf("etcd range: %w", err)
	}
	kvs, err := decodeKVs(r)
	rev, _ := strconv.ParseInt(string(r.Header.Revision), 10, 64)
	return kvs, rev, err
}

// Put stores key=val.
func (c *Client) Put(ctx context.Context, key, val string) error {
	resp, err := c.post(ctx, "/v3/kv/put", map[string]string{"key": b64(key), "value": b64(val)})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Event is one change seen by Watch; Deleted events carry no value.
type Event struct {
	KV
	Deleted bool
}

type watchResponse struct {
	Result struct {
		Events []struct {
			Type string `json:"type"`
			KV   struct {
				Key   string `json:"key"`
				Value string `json:"value"`
			} `json:"kv"`
		} `json:"events"`
	} `json:"result"`
}

// Watch calls fn for every change under prefix after revision rev, until
// ctx ends or the stream breaks (the error says which).
func (c *Client) Watch(ctx context.Context, prefix string, rev int64, fn func(Event)) error {
	body := map[string]any{"create_request": map[string]any{
		"key": b64(prefix), "range_end": b64(PrefixEnd(prefix)), "start_revision": strconv.FormatInt(rev+1, 10),
	}}
	resp, err := c.post(ctx, "/v3/watch", body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var w watchResponse
		if err := dec.Decode(&w); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("etcd watch: %w", err)
		}
		for _, e := range w.Result.Events {
			k, _ := base64.StdEncoding.DecodeString(e.KV.Key)
			v, _ := base64.StdEncoding.DecodeString(e.KV.Value)
			fn(Event{KV: KV{string(k), string(v)}, Deleted: e.Type == "DELETE"})
		}
	}
}

// Follow keeps fn up to date with the keys under prefix: it calls fn with
// the full set first, then again after every change, re-reading after a
// broken watch, until ctx ends.
func (c *Client) Follow(ctx context.Context, prefix string, fn func([]KV)) {
	for ctx.Err() == nil {
		kvs, rev, err := c.Range(ctx, prefix)
		if err != nil {
			sleep(ctx, 500*time.Millisecond)
			continue
		}
		fn(kvs)
		cur := map[string]string{}
		for _, kv := range kvs {
			cur[kv.Key] = kv.Value
		}
		_ = c.Watch(ctx, prefix, rev, func(e Event) {
			if e.Deleted {
				delete(cur, e.Key)
			} else {
				cur[e.Key] = e.Value
			}
			all := make([]KV, 0, len(cur))
			for k, v := range cur {
				all = append(all, KV{k, v})
			}
			fn(all)
		})
		sleep(ctx, 200*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
