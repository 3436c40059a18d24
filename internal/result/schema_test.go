package result

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/cnperf/cnperf/internal/golden"
)

// SchemaPath is the JSON Schema of the results file, generated from the
// Go types here (go test -run TestSchema -update rewrites it) and
// checked against every stored run file.
const schemaPath = "../../docs/results.schema.json"

// schemaOverrides narrow what the Go types allow, by "Type.field".
var schemaOverrides = map[string]map[string]any{
	"Run.schema":           {"const": Schema},
	"Comparison.verdict":   {"enum": []string{"differs", "equivalent", "undecided", "better", "worse", "same"}},
	"Comparison.direction": {"enum": []string{"better", "worse", "higher", "lower"}},
	// older files spell order-statistics "order statistics (binomial)"
	"Summary.ci_method":   {"enum": []string{"log-t", "t", "order-statistics", "none", "order statistics (binomial)"}},
	"SpeedPairing.method": {"enum": []string{SpeedSame, SpeedIndependent, SpeedMatched, SpeedUnmatched}},
	"MachineSpeed.mode":   {"enum": []string{"fast", "slow"}},
}

// schemaOf writes the JSON Schema of Run: an object per struct in $defs,
// its fields without omitempty required, no other field allowed; a field
// without omitempty that Go may write as null (a nil slice, map or
// pointer) may be null.
func schemaOf() map[string]any {
	defs := map[string]any{}
	var typ func(t reflect.Type) map[string]any
	object := func(t reflect.Type) map[string]any {
		props, order := map[string]any{}, []string{}
		var required []string
		var fields func(t reflect.Type)
		fields = func(t reflect.Type) {
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				if !f.IsExported() {
					continue
				}
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if f.Anonymous && name == "" {
					fields(f.Type)
					continue
				}
				if name == "" {
					name = f.Name
				}
				omit := strings.Contains(opts, "omitempty")
				s := typ(f.Type)
				k := f.Type.Kind()
				if !omit && (k == reflect.Slice || k == reflect.Map || k == reflect.Pointer || k == reflect.Interface) {
					s = map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
				}
				if o, ok := schemaOverrides[t.Name()+"."+name]; ok {
					for key, v := range o {
						s[key] = v
					}
				}
				props[name] = s
				order = append(order, name)
				if !omit {
					required = append(required, name)
				}
			}
		}
		fields(t)
		o := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	typ = func(t reflect.Type) map[string]any {
		if t == reflect.TypeFor[time.Time]() {
			return map[string]any{"type": "string", "format": "date-time"}
		}
		switch t.Kind() {
		case reflect.Pointer:
			return typ(t.Elem())
		case reflect.Struct:
			if _, ok := defs[t.Name()]; !ok {
				defs[t.Name()] = nil // a type that refers to itself
				defs[t.Name()] = object(t)
			}
			return map[string]any{"$ref": "#/$defs/" + t.Name()}
		case reflect.Slice, reflect.Array:
			return map[string]any{"type": "array", "items": typ(t.Elem())}
		case reflect.Map:
			if t.Elem().Kind() == reflect.Interface {
				return map[string]any{"type": "object"}
			}
			return map[string]any{"type": "object", "additionalProperties": typ(t.Elem())}
		case reflect.String:
			return map[string]any{"type": "string"}
		case reflect.Bool:
			return map[string]any{"type": "boolean"}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return map[string]any{"type": "integer"}
		case reflect.Float32, reflect.Float64:
			return map[string]any{"type": "number"}
		case reflect.Interface:
			return map[string]any{}
		}
		panic("schema: no JSON type for " + t.String())
	}
	root := typ(reflect.TypeFor[Run]())
	return map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         "https://github.com/cnperf/cnperf/docs/results.schema.json",
		"title":       "cnperf results file (" + Schema + ")",
		"description": "What `cnperf run` writes; docs/results.md describes every field. Generated from internal/result's Go types: go test ./internal/result -run TestSchema -update.",
		"$ref":        root["$ref"],
		"$defs":       defs,
	}
}

// TestSchemaUpToDate: the schema in the repository is the one the Go
// types give; a field added to a type without -update fails here.
func TestSchemaUpToDate(t *testing.T) {
	b, err := json.MarshalIndent(schemaOf(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, schemaPath, string(b)+"\n")
}

// runFilesInRepo lists every JSON file of the repository that says it is
// a results file: the examples under docs and the tests' fixtures.
func runFilesInRepo(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir("../..", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(`"schema": "`+Schema+`"`)) || bytes.Contains(b, []byte(`"schema":"`+Schema+`"`)) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestSchemaValidatesStoredRuns: every results file in docs/examples and
// the tests' fixtures is valid against the schema, and files that break
// it in the ways a reader would trip on are not.
func TestSchemaValidatesStoredRuns(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	files := runFilesInRepo(t)
	examples := 0
	for _, p := range files {
		if strings.Contains(p, "docs/examples/") {
			examples++
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := sch.Validate(doc); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	// every example is a results file but for the documents of another kind
	others := map[string]bool{"bench-lab-host-gw.json": true} // cnperf bench lab's report
	all, _ := filepath.Glob("../../docs/examples/*.json")
	for _, p := range all {
		if !slices.Contains(files, p) && !others[filepath.Base(p)] {
			t.Errorf("%s: not a %s file; validate it here or list it among the other documents", p, Schema)
		}
	}
	if len(files) < 30 || examples < 10 {
		t.Fatalf("%d results files, %d of them in docs/examples: the walk missed them", len(files), examples)
	}
	t.Logf("%d results files valid, %d in docs/examples", len(files), examples)

	valid := `{"schema":"cnperf/run/v1","cnperf_version":"x","started_at":"2026-01-01T00:00:00Z","environment":{"hostname":"h","kernel":"k","cpu_model":"c","cpus":2,"go_version":"g","backend":"lab","underlay_mtu":1500,"sysctls":{}},"results":[{"network":"host","workload":"tcp_rr","placement":"same-host","params":{},"metrics":{"transactions_per_s":1}}]}`
	for _, c := range []struct {
		name, from, to string
		ok             bool
	}{
		{"valid", "", "", true},
		{"another schema", `"cnperf/run/v1"`, `"cnperf/run/v2"`, false},
		{"a misspelt field", `"transactions_per_s"`, `"transactions_per_sec"`, false},
		{"a number as text", `"transactions_per_s":1`, `"transactions_per_s":"1"`, false},
		{"no environment", `"environment":{"hostname":"h","kernel":"k","cpu_model":"c","cpus":2,"go_version":"g","backend":"lab","underlay_mtu":1500,"sysctls":{}},`, ``, false},
		{"a bad time", `"2026-01-01T00:00:00Z"`, `"yesterday"`, false},
		{"a fractional count", `"cpus":2`, `"cpus":2.5`, false},
	} {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(valid, c.from, c.to, 1)))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(doc); (err == nil) != c.ok {
			t.Errorf("%s: valid=%v, want %v (%v)", c.name, err == nil, c.ok, err)
		}
	}
	var r Run
	if err := json.Unmarshal([]byte(valid), &r); err != nil || !slices.ContainsFunc(r.Results, func(x Result) bool { return x.Network == "host" }) {
		t.Errorf("the valid example does not read as a Run: %v", err)
	}
}
