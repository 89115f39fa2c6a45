package testutil

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	controllers "sunstrider.cn/operator/internal/controller"
)

// ExpectConditionsDoc fails t unless the table of kind's section in
// docs/conditions.md ("## <kind> (...)") agrees with classes, the kind's
// ReasonClasses: every reason of Ready=False (or Unknown) appears with the
// condition its class sets (Reconciling for Working, Stalled for Blocked),
// and every such row of the table is a reason of classes.
func ExpectConditionsDoc(t testing.TB, kind string, classes controllers.ReasonClasses) {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "docs", "conditions.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := conditionsDocRows(string(data), kind)
	if len(rows) == 0 {
		t.Fatalf("docs/conditions.md has no Ready=False row under \"## %s\"", kind)
	}
	for reason, class := range classes {
		want := controllers.ConditionReconciling
		if class == controllers.Blocked {
			want = controllers.ConditionStalled
		}
		got, ok := rows[reason]
		switch {
		case !ok:
			t.Errorf("docs/conditions.md, %s: no row for reason %s (%s)", kind, reason, want)
		case got != want:
			t.Errorf("docs/conditions.md, %s: reason %s is documented with %s, the code sets %s", kind, reason, got, want)
		}
	}
	for reason, cond := range rows {
		if _, ok := classes[reason]; !ok {
			t.Errorf("docs/conditions.md, %s: reason %s (%s) is documented but the code never sets it", kind, reason, cond)
		}
	}
}

// conditionsRow matches a table row of a Ready that is not True:
// "| `Ready=False`, `Stalled` | `Reason` | ...".
var conditionsRow = regexp.MustCompile("^\\| `Ready=(?:False|Unknown)`, `(Reconciling|Stalled)` \\| `([A-Za-z]+)` \\|")

// conditionsDocRows returns, by reason, the condition (Reconciling or
// Stalled) of the rows of kind's section.
func conditionsDocRows(doc, kind string) map[string]string {
	rows := map[string]string{}
	in := false
	for line := range strings.SplitSeq(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = line == "## "+kind || strings.HasPrefix(line, "## "+kind+" ")
			continue
		}
		if m := conditionsRow.FindStringSubmatch(line); in && m != nil {
			rows[m[2]] = m[1]
		}
	}
	return rows
}
