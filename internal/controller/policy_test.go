package controller

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// TestConditionsDocHoldsThePolicy: docs/conditions.md holds Policy as
// PolicyTable renders it, so the two cannot disagree. On a change of
// Policy the failure prints the table to paste.
func TestConditionsDocHoldsThePolicy(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "conditions.md"))
	if err != nil {
		t.Fatal(err)
	}
	if table := PolicyTable(); !strings.Contains(string(data), table) {
		t.Errorf("docs/conditions.md does not hold the policy table; paste this in its section:\n%s", table)
	}
}

func TestPolicyCoversEveryAnswer(t *testing.T) {
	for _, a := range []Answer{AnswerApplied, AnswerConflict, AnswerInvalid, AnswerRefused, AnswerStale, AnswerUnreachable} {
		r := RuleOf(a)
		if (r.Reason == "") != (r.Class == 0) {
			t.Errorf("%s: a reason needs a class and a class a reason: %+v", a, r)
		}
	}
}

func TestAnswerOf(t *testing.T) {
	gr := schema.GroupResource{Resource: "services"}
	tests := []struct {
		err  error
		want Answer
	}{
		{apierrors.NewInvalid(schema.GroupKind{Kind: "Service"}, "x", field.ErrorList{field.Invalid(field.NewPath("spec"), 1, "bad")}), AnswerInvalid},
		{apierrors.NewBadRequest("bad"), AnswerInvalid},
		{apierrors.NewForbidden(gr, "x", errors.New("quota")), AnswerRefused},
		{apierrors.NewConflict(gr, "x", errors.New("admission")), AnswerRefused},
	}
	for _, tt := range tests {
		if got := AnswerOf(tt.err); got != tt.want {
			t.Errorf("AnswerOf(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}
