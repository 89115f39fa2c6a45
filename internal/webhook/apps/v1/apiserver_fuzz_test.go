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

package v1

// The fuzz target's oracle is a real API server (testutil.FuzzAPIServer).

import (
	"os"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/testutil"
)

// oracle is the package's control plane, shared with the fuzz workers
// through FUZZ_APISERVER_APPS.
var oracle = &testutil.FuzzAPIServer{Env: "FUZZ_APISERVER_APPS", AddToScheme: sunappsv1.AddToScheme}

func TestMain(m *testing.M) { os.Exit(oracle.Main(m)) }

// dryRunCreate is the API server's verdict on creating obj (nil or an
// Invalid error); anything else fails t.
func dryRunCreate(t *testing.T, obj client.Object) error {
	t.Helper()
	return oracle.DryRunCreate(t, obj)
}

var expectFieldsIn = testutil.ExpectFieldsIn

// viaJSON is obj as the webhook receives it.
func viaJSON[T any](t *testing.T, obj *T) *T {
	t.Helper()
	return testutil.ViaJSON(t, obj)
}
