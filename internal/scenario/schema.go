package scenario

import (
	"flag"
	"slices"
)

// Schema is the JSON Schema of one scenario (a YAML document of a
// scenario file) for fs, a flag set of `cnperf run`: a property per key,
// its type from the flag's, its description the flag's help.
func Schema(fs *flag.FlagSet) map[string]any {
	props := map[string]any{
		"name": map[string]any{"type": "string", "minLength": 1, "description": "the scenario's name, in messages and progress lines; unique in its file"},
	}
	var options []string
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains(NotKeys, f.Name) {
			return
		}
		p := map[string]any{}
		switch kindOf(f) {
		case boolean:
			p["type"] = "boolean"
		case integer:
			p["type"] = "integer"
		case duration:
			p["$ref"] = "#/$defs/duration"
		case pairs:
			p["anyOf"] = []any{map[string]any{"type": "object", "minProperties": 1, "additionalProperties": map[string]any{"$ref": "#/$defs/scalar"}}, map[string]any{"$ref": "#/$defs/text"}}
		default:
			p["$ref"] = "#/$defs/text"
		}
		if f.Name == "suite" {
			p = map[string]any{"anyOf": []any{map[string]any{"type": "string", "minLength": 1}, map[string]any{"$ref": "#/$defs/suite"}}}
		}
		_, usage := flag.UnquoteUsage(f) // its `NAME` without the back quotes
		p["description"] = usage
		props[f.Name] = p
		if isOption(fs, f.Name) {
			options = append(options, f.Name)
		}
	})
	suiteProps := func(top bool) map[string]any {
		sp := map[string]any{
			"cases":        map[string]any{"type": "array", "minItems": 1, "items": map[string]any{"$ref": "#/$defs/case"}, "description": "the rows: a network in a placement each (no baseline rows are added)"},
			"workloads":    map[string]any{"$ref": "#/$defs/text", "description": "the workloads"},
			"duration":     map[string]any{"$ref": "#/$defs/duration", "description": "how long each measurement runs"},
			"repeat":       map[string]any{"type": "integer", "minimum": 1, "description": "interleaved rounds"},
			"message-size": map[string]any{"$ref": "#/$defs/text", "description": "one size (every workload's) or a list (a sweep)"},
			"lb":           map[string]any{"$ref": "#/$defs/text", "description": "ClusterIP load balancers"},
			"services":     map[string]any{"$ref": "#/$defs/text", "description": "numbers of services, scale steps"},
		}
		for _, o := range options {
			if _, dup := sp[o]; !dup {
				sp[o] = map[string]any{"$ref": "#/$defs/text", "description": "the option --" + o + " (see cnperf run -h); the flag overrides it"}
			}
		}
		if top {
			sp["summary"] = map[string]any{"type": "string", "description": "one line for cnperf suites"}
			sp["source"] = map[string]any{"type": "string", "description": "the study it reproduces"}
			sp["quick"] = map[string]any{"$ref": "#/$defs/quick"}
		}
		return sp
	}
	scalar := map[string]any{"type": []string{"string", "number", "boolean"}}
	return map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "https://github.com/cnperf/cnperf/docs/scenario.schema.json",
		"title":                "cnperf scenario: one YAML document of a scenario file (cnperf run -f FILE)",
		"description":          "A name and the flags of cnperf run as keys; docs/usage.md (Scenario files) describes the format. Generated from cnperf run's flags: go test ./cmd/cnperf -run TestScenarioSchema -update.",
		"type":                 "object",
		"required":             []string{"name"},
		"additionalProperties": false,
		"properties":           props,
		"$defs": map[string]any{
			"scalar":   scalar,
			"text":     map[string]any{"anyOf": []any{scalar, map[string]any{"type": "array", "minItems": 1, "items": scalar}}, "description": "a value, or a list of values (the flag's comma-separated list)"},
			"duration": map[string]any{"type": "string", "pattern": `^([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$`},
			"case": map[string]any{"type": "object", "required": []string{"network", "placement"}, "additionalProperties": false, "properties": map[string]any{
				"network":   map[string]any{"type": "string", "minLength": 1},
				"placement": map[string]any{"enum": []string{"same-pod", "same-host", "cross-host", "same-node", "cross-node"}},
			}},
			"suite": map[string]any{"type": "object", "additionalProperties": false, "properties": suiteProps(true),
				"description": "a suite written out, as cnperf suites --show NAME prints it: the scenario's other keys override it, as flags override --suite"},
			"quick": map[string]any{"type": "object", "additionalProperties": false, "properties": suiteProps(false),
				"description": "what --quick changes: a key here replaces the suite's; without it --quick is one round of 1 s cells"},
		},
	}
}
