/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Reason is one reason a kind's Ready condition can have, with what it
// means to a person: a row of the kind's table in docs/conditions.md,
// which make docs renders from it (Table), so the table says what the code
// does.
type Reason struct {
	// Reason is the condition's reason.
	Reason string
	// Status is Ready's status with it; False when empty.
	Status metav1.ConditionStatus
	// Class is what it means to someone waiting, while Ready is not True:
	// Working sets Reconciling, Blocked sets Stalled.
	Class ReasonClass
	// Condition, when set, is another condition the row is about, as
	// "Type=Status" (kstatus does not read it); Class is then unused.
	Condition string
	// Meaning says it for a person.
	Meaning string
}

// Reasons is one kind's table of reasons.
type Reasons []Reason

// Classes is the kind's ReasonClasses: the class of every reason its Ready
// can have when not True.
func (rs Reasons) Classes() ReasonClasses {
	rc := ReasonClasses{}
	for _, r := range rs {
		if r.Condition == "" && r.status() != metav1.ConditionTrue {
			rc[r.Reason] = r.Class
		}
	}
	return rc
}

func (r Reason) status() metav1.ConditionStatus {
	if r.Status == "" {
		return metav1.ConditionFalse
	}
	return r.Status
}

// Table renders rs as the Markdown table of docs/conditions.md: the
// conditions each reason sets and what kstatus (Flux, kpt, Config Sync)
// makes of them.
func (rs Reasons) Table() string {
	var b strings.Builder
	b.WriteString("| Condition | Reason | Meaning | kstatus |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, r := range rs {
		cond, kstatus := "`"+ConditionReady+"=True`", "`Current`"
		switch {
		case r.Condition != "":
			typ, _, _ := strings.Cut(r.Condition, "=")
			cond, kstatus = "`"+r.Condition+"`", "none: kstatus does not read `"+typ+"`"
		case r.status() != metav1.ConditionTrue && r.Class == Blocked:
			cond, kstatus = fmt.Sprintf("`%s=%s`, `%s`", ConditionReady, r.status(), ConditionStalled), "`Failed`"
		case r.status() != metav1.ConditionTrue:
			cond, kstatus = fmt.Sprintf("`%s=%s`, `%s`", ConditionReady, r.status(), ConditionReconciling), "`InProgress`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s |\n", cond, r.Reason, r.Meaning, kstatus)
	}
	return b.String()
}
