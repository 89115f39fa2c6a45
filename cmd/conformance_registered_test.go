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

package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	// module is this module's path, with the slash its packages' paths
	// add.
	module = "sunstrider.cn/operator/"
	// controllers is the path of the controller packages' parent.
	controllers = module + "internal/controller/"
	// testutilPath is the path of the package of testutil.Conformance.
	testutilPath = module + "internal/testutil"
)

// TestEveryControllerHasAConformanceAdapter: every reconciler this package
// sets up (a &<package>.<Name>Reconciler{…} of a controller package, in
// main.go and the files beside it) has a conformance adapter, read from
// the sources, since each package's tests are a binary of their own: a
// Test function in one of its package's *_conformance_test.go files calls
// testutil.Conformance with Controller: ControllerName, and, for each type
// of child its SetupWithManager Owns, a ConformanceChild literal there
// holds an object of that type, or an UnadaptedChild declares it (with
// why). Removing an adapter, or adding a child without one, fails it.
// Children watched otherwise than by Owns (a lazy watch of a kind whose
// API may be missing) are not seen.
func TestEveryControllerHasAConformanceAdapter(t *testing.T) {
	fset := token.NewFileSet()
	reconcilers := map[string]string{}
	for _, f := range parseFiles(t, fset, ".", false) {
		imports := importsOf(f)
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				if path, name := typeOf(imports, lit.Type); strings.HasPrefix(path, controllers) &&
					strings.HasSuffix(name, "Reconciler") {
					reconcilers[path] = name
				}
			}
			return true
		})
	}
	if len(reconcilers) == 0 {
		t.Fatalf("no &<package>.<Name>Reconciler{…} of a package under %s in cmd: the test no longer reads "+
			"how cmd sets its controllers up", controllers)
	}
	for path, reconciler := range reconcilers {
		t.Run(reconciler, func(t *testing.T) {
			dir := filepath.Join("..", filepath.FromSlash(strings.TrimPrefix(path, module)))
			owned := ownedTypes(t, fset, dir)
			adapted, found := adapter(t, fset, dir)
			if !found {
				t.Fatalf("%s (%s) has no conformance adapter: no Test function of a %s/*_conformance_test.go "+
					"calls testutil.Conformance with Controller: ControllerName", reconciler, path, dir)
			}
			for _, child := range owned {
				if !slices.Contains(adapted, child) {
					t.Errorf("%s Owns %s, which neither a testutil.ConformanceChild of its conformance adapter "+
						"holds nor its Unadapted declares", reconciler, child)
				}
			}
			t.Logf("%s: adapter with children %v (owns %v)", reconciler, adapted, owned)
		})
	}
}

// parseFiles parses the Go files of dir: its tests' (*_test.go) or the
// others.
func parseFiles(t *testing.T, fset *token.FileSet, dir string, tests bool) []*ast.File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") != tests {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// importsOf maps the names f refers to its imports by to their paths.
func importsOf(f *ast.File) map[string]string {
	imports := map[string]string{}
	for _, spec := range f.Imports {
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = path
	}
	return imports
}

// typeOf is the package path and name of expr, a type qualified by an
// import (pkg.Name); empty when it is not one.
func typeOf(imports map[string]string, expr ast.Expr) (path, name string) {
	sel, ok := expr.(*ast.SelectorExpr)
	if !ok {
		return "", ""
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok || imports[pkg.Name] == "" {
		return "", ""
	}
	return imports[pkg.Name], sel.Sel.Name
}

// ownedTypes are the types of the children the controller in dir Owns
// ("k8s.io/api/apps/v1.Deployment"), sorted.
func ownedTypes(t *testing.T, fset *token.FileSet, dir string) []string {
	t.Helper()
	var owned []string
	for _, f := range parseFiles(t, fset, dir, false) {
		imports := importsOf(f)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Owns" || len(call.Args) == 0 {
				return true
			}
			if ref, ok := call.Args[0].(*ast.UnaryExpr); ok && ref.Op == token.AND {
				if lit, ok := ref.X.(*ast.CompositeLit); ok {
					if path, name := typeOf(imports, lit.Type); path != "" {
						owned = append(owned, path+"."+name)
						return true
					}
				}
			}
			t.Errorf("%s: Owns of something other than &pkg.Type{}: the test cannot tell the child's type",
				fset.Position(call.Pos()))
			return true
		})
	}
	slices.Sort(owned)
	return slices.Compact(owned)
}

// adapter reads the conformance adapter in dir's *_conformance_test.go
// files: found when a Test function calls testutil.Conformance with
// Controller: ControllerName; adapted are the types of the objects its
// ConformanceChild and UnadaptedChild literals hold.
func adapter(t *testing.T, fset *token.FileSet, dir string) (adapted []string, found bool) {
	t.Helper()
	for _, f := range parseFiles(t, fset, dir, true) {
		if !strings.HasSuffix(fset.Position(f.Pos()).Filename, "_conformance_test.go") {
			continue
		}
		imports := importsOf(f)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Test") || fn.Body == nil {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				if path, name := typeOf(imports, call.Fun); path != testutilPath || name != "Conformance" {
					return true
				}
				kind, ok := call.Args[1].(*ast.CompositeLit)
				if !ok {
					return true
				}
				for _, elt := range kind.Elts {
					kv, ok := elt.(*ast.KeyValueExpr)
					if !ok {
						continue
					}
					switch key := kv.Key.(*ast.Ident); {
					case key == nil:
					case key.Name == "Controller":
						if v, ok := kv.Value.(*ast.Ident); ok && v.Name == "ControllerName" {
							found = true
						}
					case key.Name == "Children" || key.Name == "Unadapted":
						adapted = append(adapted, childTypes(imports, kv.Value)...)
					}
				}
				return true
			})
		}
	}
	slices.Sort(adapted)
	return slices.Compact(adapted), found
}

// childTypes are the types of the composite literals (pkg.Type{…}) inside
// children, a []testutil.ConformanceChild or []testutil.UnadaptedChild
// literal.
func childTypes(imports map[string]string, children ast.Expr) []string {
	var types []string
	list, ok := children.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	for _, child := range list.Elts {
		ast.Inspect(child, func(n ast.Node) bool {
			if lit, ok := n.(*ast.CompositeLit); ok {
				if path, name := typeOf(imports, lit.Type); path != "" && path != testutilPath {
					types = append(types, path+"."+name)
				}
			}
			return true
		})
	}
	return types
}
