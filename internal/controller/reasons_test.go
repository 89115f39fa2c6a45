package controller

import (
	"strings"
	"testing"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReasonsTableAndClasses(t *testing.T) {
	rs := Reasons{
		{Reason: "Good", Status: metav1.ConditionTrue, Meaning: "all well"},
		{Reason: "Busy", Class: Working, Meaning: "working"},
		{Reason: "Stuck", Class: Blocked, Meaning: "a person acts"},
		{Reason: "NoIdea", Status: metav1.ConditionUnknown, Class: Working, Meaning: "unknown"},
		{Reason: "Found", Condition: "FriendFound=True", Meaning: "another condition"},
	}
	g := NewWithT(t)
	g.Expect(rs.Classes()).To(Equal(ReasonClasses{"Busy": Working, "Stuck": Blocked, "NoIdea": Working}),
		"only the reasons of a Ready that is not True")
	rows := strings.Split(strings.TrimSpace(rs.Table()), "\n")
	g.Expect(rows).To(Equal([]string{
		"| Condition | Reason | Meaning | kstatus |",
		"| --- | --- | --- | --- |",
		"| `Ready=True` | `Good` | all well | `Current` |",
		"| `Ready=False`, `Reconciling` | `Busy` | working | `InProgress` |",
		"| `Ready=False`, `Stalled` | `Stuck` | a person acts | `Failed` |",
		"| `Ready=Unknown`, `Reconciling` | `NoIdea` | unknown | `InProgress` |",
		"| `FriendFound=True` | `Found` | another condition | none: kstatus does not read `FriendFound` |",
	}))
}
