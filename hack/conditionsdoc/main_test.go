package main

import (
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	doc := "# T\n\n<!-- BEGIN GENERATED: a -->\nold\n<!-- END GENERATED: a -->\n\nprose\n"
	got, err := render(doc, map[string]string{"a": "| new |\n"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# T\n\n<!-- BEGIN GENERATED: a -->\n\n| new |\n\n<!-- END GENERATED: a -->\n\nprose\n"
	if got != want {
		t.Errorf("render = %q, want %q", got, want)
	}
	again, err := render(got, map[string]string{"a": "| new |\n"})
	if err != nil || again != got {
		t.Errorf("rendering twice changed the document: %q, %v", again, err)
	}
	for name, tables := range map[string]map[string]string{
		"a marker without a table": {},
		"a table without a marker": {"a": "x\n", "b": "y\n"},
	} {
		if _, err := render(doc, tables); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	mismatched := strings.Replace(doc, "END GENERATED: a", "END GENERATED: b", 1)
	if _, err := render(mismatched, map[string]string{"a": "x\n"}); err == nil {
		t.Error("mismatched markers: no error")
	}
}
