package main

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

const (
	xText       = "urn:alm:descriptor:com.tectonic.ui:text"
	xNumber     = "urn:alm:descriptor:com.tectonic.ui:number"
	xBoolean    = "urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	xSelect     = "urn:alm:descriptor:com.tectonic.ui:select:"
	xConditions = "urn:alm:descriptor:io.kubernetes.conditions"
)

// ownedCRDs lists every served version of every CRD as owned by the CSV.
// Each entry starts from the base CSV's entry of the same CRD name (version
// left empty there: it applies to every version), whose descriptors override
// or add to those derived from the version's schema: one per top-level spec
// and status field, described by its schema description. A CRD without a base
// entry (a new kind) still gets a complete entry from its schema alone.
func ownedCRDs(base []v1alpha1.CRDDescription, crds []*apiextv1.CustomResourceDefinition) (
	[]v1alpha1.CRDDescription, error) {
	baseByName := map[string]v1alpha1.CRDDescription{}
	for _, b := range base {
		baseByName[b.Name] = b
	}
	var owned []v1alpha1.CRDDescription
	for _, crd := range crds {
		b, hasBase := baseByName[crd.Name]
		delete(baseByName, crd.Name)
		usedSpec, usedStatus := map[string]bool{}, map[string]bool{}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				return nil, fmt.Errorf("CRD %s version %s has no schema", crd.Name, v.Name)
			}
			root := v.Schema.OpenAPIV3Schema
			d := v1alpha1.CRDDescription{
				Name: crd.Name, Version: v.Name, Kind: crd.Spec.Names.Kind,
				DisplayName: b.DisplayName, Description: b.Description, Resources: b.Resources,
			}
			if d.DisplayName == "" {
				d.DisplayName = words(crd.Spec.Names.Kind)
			}
			if d.Description == "" {
				d.Description = firstSentence(root.Description)
			}
			specSchema, statusSchema := root.Properties["spec"], root.Properties["status"]
			d.SpecDescriptors = mergeDescriptors(autoDescriptors(specSchema, true), b.SpecDescriptors,
				&specSchema, usedSpec)
			d.StatusDescriptors = statusDescriptors(mergeDescriptors(autoDescriptors(statusSchema, false),
				fromStatus(b.StatusDescriptors), &statusSchema, usedStatus))
			owned = append(owned, d)
		}
		if !hasBase {
			continue
		}
		for _, s := range b.SpecDescriptors {
			if !usedSpec[s.Path] {
				return nil, fmt.Errorf("base CSV: %s has no spec.%s in any served version", crd.Name, s.Path)
			}
		}
		for _, s := range b.StatusDescriptors {
			if !usedStatus[s.Path] {
				return nil, fmt.Errorf("base CSV: %s has no status.%s in any served version", crd.Name, s.Path)
			}
		}
	}
	if len(baseByName) > 0 {
		return nil, fmt.Errorf("base CSV: owned CRDs %v are not in config/default", slices.Sorted(maps.Keys(baseByName)))
	}
	return owned, nil
}

// autoDescriptors describes the top-level fields of a spec or status schema.
func autoDescriptors(s apiextv1.JSONSchemaProps, spec bool) []v1alpha1.SpecDescriptor {
	var out []v1alpha1.SpecDescriptor
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		if name == "observedGeneration" {
			continue // bookkeeping, not for people
		}
		d := v1alpha1.SpecDescriptor{Path: name, DisplayName: words(name), Description: firstSentence(p.Description)}
		switch {
		case name == "conditions" && !spec:
			d.XDescriptors = []string{xConditions}
		case !spec:
		case p.Type == "string" && len(p.Enum) > 0:
			for _, e := range p.Enum {
				d.XDescriptors = append(d.XDescriptors, xSelect+strings.Trim(string(e.Raw), `"`))
			}
		case p.Type == "string":
			d.XDescriptors = []string{xText}
		case p.Type == "integer" || p.Type == "number":
			d.XDescriptors = []string{xNumber}
		case p.Type == "boolean":
			d.XDescriptors = []string{xBoolean}
		}
		out = append(out, d)
	}
	return out
}

// mergeDescriptors overlays the base descriptors whose path the schema has
// (marking them used) on the derived ones, sorted by path.
func mergeDescriptors(auto, base []v1alpha1.SpecDescriptor, s *apiextv1.JSONSchemaProps,
	used map[string]bool) []v1alpha1.SpecDescriptor {
	byPath := map[string]v1alpha1.SpecDescriptor{}
	for _, d := range auto {
		byPath[d.Path] = d
	}
	for _, b := range base {
		field, ok := lookup(s, b.Path)
		if !ok {
			continue
		}
		used[b.Path] = true
		d, ok := byPath[b.Path]
		if !ok {
			d = v1alpha1.SpecDescriptor{Path: b.Path, DisplayName: words(b.Path[strings.LastIndex(b.Path, ".")+1:]),
				Description: firstSentence(field.Description)}
		}
		if b.DisplayName != "" {
			d.DisplayName = b.DisplayName
		}
		if b.Description != "" {
			d.Description = b.Description
		}
		if b.XDescriptors != nil {
			d.XDescriptors = b.XDescriptors
		}
		byPath[b.Path] = d
	}
	out := make([]v1alpha1.SpecDescriptor, 0, len(byPath))
	for _, path := range slices.Sorted(maps.Keys(byPath)) {
		out = append(out, byPath[path])
	}
	return out
}

// lookup finds a dotted path (no array indexes) in a schema.
func lookup(s *apiextv1.JSONSchemaProps, path string) (apiextv1.JSONSchemaProps, bool) {
	cur := *s
	for part := range strings.SplitSeq(path, ".") {
		next, ok := cur.Properties[part]
		if !ok {
			return apiextv1.JSONSchemaProps{}, false
		}
		cur = next
	}
	return cur, true
}

func fromStatus(in []v1alpha1.StatusDescriptor) []v1alpha1.SpecDescriptor {
	out := make([]v1alpha1.SpecDescriptor, 0, len(in))
	for _, d := range in {
		out = append(out, v1alpha1.SpecDescriptor(d))
	}
	return out
}

func statusDescriptors(in []v1alpha1.SpecDescriptor) []v1alpha1.StatusDescriptor {
	out := make([]v1alpha1.StatusDescriptor, 0, len(in))
	for _, d := range in {
		out = append(out, v1alpha1.StatusDescriptor(d))
	}
	return out
}

// words turns a Go or JSON name into words for people: "configMapName" is
// "Config Map Name", "OperatorConfiguration" "Operator Configuration".
func words(name string) string {
	var b strings.Builder
	runes := []rune(name)
	for i, r := range runes {
		if i == 0 {
			b.WriteRune(unicode.ToUpper(r))
			continue
		}
		if unicode.IsUpper(r) && (unicode.IsLower(runes[i-1]) ||
			(i+1 < len(runes) && unicode.IsLower(runes[i+1]) && unicode.IsUpper(runes[i-1]))) {
			b.WriteRune(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

var (
	spaces = regexp.MustCompile(`\s+`)
	// sentenceEnd is a period before the next sentence ("e.g. 30s" is not).
	sentenceEnd = regexp.MustCompile(`\. [A-Z]`)
)

// firstSentence is the first sentence of a schema description, on one line.
func firstSentence(desc string) string {
	para, _, _ := strings.Cut(strings.TrimSpace(desc), "\n\n")
	para = spaces.ReplaceAllString(para, " ")
	if loc := sentenceEnd.FindStringIndex(para); loc != nil {
		para = para[:loc[0]+1]
	}
	return para
}
