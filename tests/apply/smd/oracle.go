// Command oracle is a server-side-apply merge oracle for kserve-compile's apply-loop tests.
//
// It runs structured-merge-diff (the library kube-apiserver uses for server-side apply) over
// JSON requests, one per line on stdin, and answers one JSON line per request on stdout:
//
//	request:  {"schema": "<SMD schema YAML>", "type": "<type name>" (empty: deduced),
//	           "op": "apply"|"update", "apiVersion": "apps/v1", "manager": "kserve-compile",
//	           "subresource": ""|"status"|"scale", "force": false,
//	           "live": {...} | null, "object": {...} (apply: the applied config; update: the new object),
//	           "managedFields": [{"manager", "operation", "subresource", "apiVersion", "fieldsV1"}],
//	           "ignore": [["status"]]}  (reset fields: never owned; an apply does not merge them from the
//	                                     config; an update must carry their live values, the caller's job)
//	answer:   {"object": {...}, "managedFields": [...], "changed": bool}
//	       or {"error": "...", "conflicts": [{"manager", "operation", "subresource", "field"}]}
//	       or {"error": "..."}
//
// Besides the merge it mirrors two apiserver rules the library leaves to its caller: the object
// identity fields (apiVersion, kind, metadata.name/namespace/uid/...) are never owned, and a
// manager is identified by (name, operation, subresource), so one tool's Apply and Update entries
// are distinct, as in a real managedFields list.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v4/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v4/merge"
	"sigs.k8s.io/structured-merge-diff/v4/typed"
	"sigs.k8s.io/structured-merge-diff/v4/value"
)

type managedEntry struct {
	Manager     string          `json:"manager"`
	Operation   string          `json:"operation"`
	Subresource string          `json:"subresource,omitempty"`
	APIVersion  string          `json:"apiVersion"`
	FieldsType  string          `json:"fieldsType"`
	FieldsV1    json.RawMessage `json:"fieldsV1"`
}

// managerKey is how an entry is named inside SMD's ManagedFields map.
type managerKey struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource,omitempty"`
}

type request struct {
	Schema        string          `json:"schema"`
	Type          string          `json:"type"`
	Op            string          `json:"op"`
	APIVersion    string          `json:"apiVersion"`
	Manager       string          `json:"manager"`
	Subresource   string          `json:"subresource"`
	Force         bool            `json:"force"`
	Live          json.RawMessage `json:"live"`
	Object        json.RawMessage `json:"object"`
	ManagedFields []managedEntry  `json:"managedFields"`
	Ignore        [][]string      `json:"ignore"`
}

type conflict struct {
	Manager     string `json:"manager"`
	Operation   string `json:"operation"`
	Subresource string `json:"subresource,omitempty"`
	APIVersion  string `json:"apiVersion"`
	Field       string `json:"field"`
	Message     string `json:"message"` // the apiserver's cause message, e.g. conflict with "x" using apps/v1
}

type answer struct {
	Object        json.RawMessage `json:"object,omitempty"`
	ManagedFields []managedEntry  `json:"managedFields,omitempty"`
	Changed       bool            `json:"changed"`
	Error         string          `json:"error,omitempty"`
	Conflicts     []conflict      `json:"conflicts,omitempty"`
}

// sameVersion is the converter for a single-version world: every object is already in the asked version.
type sameVersion struct{}

func (sameVersion) Convert(v *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return v, nil
}
func (sameVersion) IsMissingVersionError(error) bool { return false }

// identityFields are never owned by anyone (kube-apiserver strips them from every manager's set).
var identityFields = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

var parsers = map[string]*typed.Parser{}

func parseableType(schemaText, name string) (typed.ParseableType, error) {
	if name == "" {
		return typed.DeducedParseableType, nil
	}
	p, ok := parsers[schemaText]
	if !ok {
		var err error
		if p, err = typed.NewParser(typed.YAMLObject(schemaText)); err != nil {
			return typed.ParseableType{}, fmt.Errorf("schema: %v", err)
		}
		parsers[schemaText] = p
	}
	t := p.Type(name)
	if !t.IsValid() {
		return typed.ParseableType{}, fmt.Errorf("schema has no type %q", name)
	}
	return t, nil
}

func typedFrom(t typed.ParseableType, raw json.RawMessage, what string) (*typed.TypedValue, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	v, err := value.FromJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	tv, err := t.FromUnstructured(v.Unstructured())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return tv, nil
}

func decodeManaged(entries []managedEntry) (fieldpath.ManagedFields, error) {
	out := fieldpath.ManagedFields{}
	for _, e := range entries {
		set := &fieldpath.Set{}
		if len(e.FieldsV1) > 0 {
			if err := set.FromJSON(bytes.NewReader(e.FieldsV1)); err != nil {
				return nil, fmt.Errorf("managedFields[%s]: %v", e.Manager, err)
			}
		}
		key, _ := json.Marshal(managerKey{e.Manager, e.Operation, e.Subresource})
		out[string(key)] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(e.APIVersion), e.Operation == "Apply")
	}
	return out, nil
}

func decodeKey(key string) managerKey {
	var k managerKey
	if err := json.Unmarshal([]byte(key), &k); err != nil {
		k.Manager = key
	}
	return k
}

func encodeManaged(managed fieldpath.ManagedFields) ([]managedEntry, error) {
	out := []managedEntry{}
	for key, vs := range managed {
		set := vs.Set().Difference(identityFields)
		if set.Empty() {
			continue
		}
		raw, err := set.ToJSON()
		if err != nil {
			return nil, err
		}
		k := decodeKey(key)
		out = append(out, managedEntry{k.Manager, k.Operation, k.Subresource, string(vs.APIVersion()), "FieldsV1", raw})
	}
	// Apply entries first, then by name: deterministic, close to the apiserver's order.
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Operation == "Apply") != (b.Operation == "Apply") {
			return a.Operation == "Apply"
		}
		if a.Manager != b.Manager {
			return a.Manager < b.Manager
		}
		return a.Subresource < b.Subresource
	})
	return out, nil
}

func handle(req request) answer {
	t, err := parseableType(req.Schema, req.Type)
	if err != nil {
		return answer{Error: err.Error()}
	}
	live, err := typedFrom(t, req.Live, "live object")
	if err != nil {
		return answer{Error: err.Error()}
	}
	obj, err := typedFrom(t, req.Object, "request object")
	if err != nil {
		return answer{Error: err.Error()}
	}
	managed, err := decodeManaged(req.ManagedFields)
	if err != nil {
		return answer{Error: err.Error()}
	}
	version := fieldpath.APIVersion(req.APIVersion)
	ignored := fieldpath.NewSet()
	for _, p := range req.Ignore {
		parts := make([]interface{}, len(p))
		for i, s := range p {
			parts[i] = s
		}
		ignored.Insert(fieldpath.MakePathOrDie(parts...))
	}
	updater := merge.Updater{Converter: sameVersion{}, IgnoredFields: map[fieldpath.APIVersion]*fieldpath.Set{version: ignored}}
	operation := map[string]string{"apply": "Apply", "update": "Update"}[req.Op]
	if operation == "" {
		return answer{Error: fmt.Sprintf("unknown op %q (want apply or update)", req.Op)}
	}
	key, _ := json.Marshal(managerKey{req.Manager, operation, req.Subresource})

	original := managed // the Updater returns an empty map on error; conflicts need the other managers' versions
	var merged *typed.TypedValue
	if operation == "Apply" {
		// Reset fields are not merged from the config: the live value stays (as the apiserver's strategies do).
		merged, managed, err = updater.Apply(live, obj.RemoveItems(ignored), version, managed, string(key), req.Force)
		if merged == nil && err == nil {
			merged = live
		}
	} else {
		merged, managed, err = updater.Update(live, obj, version, managed, string(key))
	}
	if err != nil {
		var cs merge.Conflicts
		if errors.As(err, &cs) {
			out := answer{}
			for _, c := range cs {
				k := decodeKey(c.Manager)
				apiVersion := ""
				if vs, ok := original[c.Manager]; ok {
					apiVersion = string(vs.APIVersion())
				}
				msg := fmt.Sprintf("conflict with %q", k.Manager)
				if k.Subresource != "" {
					msg += fmt.Sprintf(" with subresource %q", k.Subresource)
				}
				msg += " using " + apiVersion
				out.Conflicts = append(out.Conflicts, conflict{k.Manager, k.Operation, k.Subresource, apiVersion,
					c.Path.String(), msg})
			}
			sort.Slice(out.Conflicts, func(i, j int) bool {
				a, b := out.Conflicts[i], out.Conflicts[j]
				if a.Manager != b.Manager {
					return a.Manager < b.Manager
				}
				return a.Field < b.Field
			})
			plural := "s"
			if len(out.Conflicts) == 1 {
				plural = ""
			}
			out.Error = fmt.Sprintf("Apply failed with %d conflict%s:", len(out.Conflicts), plural)
			for _, c := range out.Conflicts {
				out.Error += fmt.Sprintf(" %s: %s;", c.Message, c.Field)
			}
			out.Error = out.Error[:len(out.Error)-1]
			return out
		}
		return answer{Error: err.Error()}
	}
	cmp, err := live.Compare(merged)
	if err != nil {
		return answer{Error: err.Error()}
	}
	raw, err := value.ToJSON(merged.AsValue())
	if err != nil {
		return answer{Error: err.Error()}
	}
	entries, err := encodeManaged(managed)
	if err != nil {
		return answer{Error: err.Error()}
	}
	return answer{Object: raw, ManagedFields: entries, Changed: !cmp.IsSame()}
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for {
		line, err := in.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req request
			var ans answer
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				ans = answer{Error: "bad request: " + jerr.Error()}
			} else {
				ans = handle(req)
			}
			if eerr := enc.Encode(ans); eerr != nil {
				fmt.Fprintln(os.Stderr, "oracle:", eerr)
				os.Exit(3)
			}
			out.Flush()
		}
		if err != nil {
			return
		}
	}
}
