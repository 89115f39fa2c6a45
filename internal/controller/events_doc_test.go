package controller

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dynamicEventSites are the only Eventf calls whose reason is not a
// constant: the Warning of a transition into Stalled (its reason is
// Stalled's, one of each kind's Blocked reasons) and the
// OperatorConfiguration's restart notice.
var dynamicEventSites = []string{"internal/controller/status.go", "internal/controller/config/operatorconfiguration_controller.go"}

// dynamicNormalReasons are the Normal reasons recorded at a dynamic site:
// the OperatorConfiguration's Ready reason when a restart is needed.
var dynamicNormalReasons = []string{"RestartRequired"}

// TestEventsReferenceAgreesWithTheCode: every Normal event reason the code
// records with a constant reason is in docs/reference/metrics-and-events.md
// as a Normal event, and every Normal reason documented there is recorded
// by the code. Warning events are Stalled's reasons (StatusWriter), listed
// by conditions.md; a new event site with a computed reason fails the test
// until it is named in dynamicEventSites and documented.
func TestEventsReferenceAgreesWithTheCode(t *testing.T) {
	root := filepath.Join("..", "..")
	inCode, dynamic := eventReasonsInCode(t, filepath.Join(root, "internal"), root)
	slices.Sort(dynamic)
	want := slices.Clone(dynamicEventSites)
	slices.Sort(want)
	if !slices.Equal(dynamic, want) {
		t.Errorf("Eventf calls with a computed reason: %v, want only %v", dynamic, want)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "reference", "metrics-and-events.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := normalEventsDocumented(string(doc))
	if len(inCode) == 0 || len(documented) == 0 {
		t.Fatalf("found %d Normal reasons in the code and %d in the reference: the scan is broken", len(inCode), len(documented))
	}
	for reason, where := range inCode {
		if !documented[reason] {
			t.Errorf("Normal event %s (%s) is not in docs/reference/metrics-and-events.md", reason, where)
		}
	}
	for reason := range documented {
		if _, ok := inCode[reason]; !ok && !slices.Contains(dynamicNormalReasons, reason) {
			t.Errorf("docs/reference/metrics-and-events.md documents Normal event %s, which the code never records", reason)
		}
	}
}

// eventReasonsInCode returns the constant reasons of the Normal events that
// the non-test Go files under dir record (Eventf(obj, related, type,
// reason, action, ...)), with where, and the files whose calls have a
// computed reason (relative to root).
func eventReasonsInCode(t *testing.T, dir, root string) (normal map[string]string, dynamic []string) {
	t.Helper()
	normal = map[string]string{}
	fset := token.NewFileSet()
	byDir := map[string][]*ast.File{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		byDir[filepath.Dir(path)] = append(byDir[filepath.Dir(path)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, files := range byDir {
		consts := stringConsts(files)
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) < 5 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Eventf" {
					return true
				}
				file, _ := filepath.Rel(root, fset.Position(call.Pos()).Filename)
				typ, _ := call.Args[2].(*ast.SelectorExpr)
				reason, known := constString(call.Args[3], consts)
				switch {
				case !known:
					if !slices.Contains(dynamic, file) {
						dynamic = append(dynamic, file)
					}
				case typ != nil && typ.Sel.Name == "EventTypeNormal":
					normal[reason] = file
				}
				return true
			})
		}
	}
	return normal, dynamic
}

// stringConsts returns the string constants declared in files.
func stringConsts(files []*ast.File) map[string]string {
	consts := map[string]string{}
	for _, f := range files {
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	return consts
}

// constString is the value of e when it is a string literal or a constant
// of consts.
func constString(e ast.Expr, consts map[string]string) (string, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(v.Value)
		return s, err == nil
	case *ast.Ident:
		s, ok := consts[v.Name]
		return s, ok
	}
	return "", false
}

// eventRow matches a row of the reference's event table: its reasons and
// type.
var eventRow = regexp.MustCompile("^\\| (`[A-Za-z]+`(?:, `[A-Za-z]+`)*) \\| (Normal|Warning) \\|")

// normalEventsDocumented returns the Normal reasons of the event table.
func normalEventsDocumented(doc string) map[string]bool {
	reasons := map[string]bool{}
	for line := range strings.SplitSeq(doc, "\n") {
		m := eventRow.FindStringSubmatch(line)
		if m == nil || m[2] != "Normal" {
			continue
		}
		for r := range strings.SplitSeq(m[1], ", ") {
			reasons[strings.Trim(r, "`")] = true
		}
	}
	return reasons
}
