package option

import (
	"bytes"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	specs := []Spec{
		{Name: "encrypt", Kind: Enum, Values: []string{"none", "aes-gcm"}, Default: "none", Help: "encryption"},
		{Name: "port", Kind: Int, Default: "8472", Help: "UDP port"},
		{Name: "learn", Kind: Bool, Help: "learning"},
		{Name: "wait", Kind: Duration, Help: "wait"},
	}
	cases := []struct {
		set  map[string]string
		want string // "" = ok; else a substring of the error
	}{
		{nil, ""},
		{map[string]string{"encrypt": "aes-gcm", "port": "4789", "learn": "true", "wait": "1s"}, ""},
		{map[string]string{"bogus": "1"}, `network x has no option "bogus"; its options are encrypt, port, learn, wait`},
		{map[string]string{"encrypt": "rot13"}, "want one of none, aes-gcm"},
		{map[string]string{"port": "x"}, "want a whole number"},
		{map[string]string{"learn": "maybe"}, "want true or false"},
		{map[string]string{"wait": "5"}, "want a duration"},
	}
	for _, c := range cases {
		err := Validate("network x", specs, c.set)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v: %v", c.set, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%v: got %v, want %q", c.set, err, c.want)
		}
	}
	if err := Validate("network host", nil, map[string]string{"a": "b"}); err == nil || !strings.Contains(err.Error(), "has no options") {
		t.Errorf("no specs: %v", err)
	}
	if got := Get(specs, nil, "port"); got != "8472" {
		t.Errorf("default: %q", got)
	}
	var b bytes.Buffer
	Describe(&b, "  ", specs[:1])
	if got := b.String(); got != "  encrypt=none|aes-gcm  encryption (default none)\n" {
		t.Errorf("describe: %q", got)
	}
}
