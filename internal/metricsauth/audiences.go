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

package metricsauth

import (
	"fmt"
	"slices"
	"strings"
)

// ParseAudiences reads a comma-separated list of token audiences (the
// manager's --metrics-token-audiences): spaces around each are dropped;
// an empty value is no audience, an empty element or a repeated one an
// error.
func ParseAudiences(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	var audiences []string
	for a := range strings.SplitSeq(value, ",") {
		a = strings.TrimSpace(a)
		switch {
		case a == "":
			return nil, fmt.Errorf("empty audience in %q", value)
		case strings.ContainsAny(a, " \t\n"):
			return nil, fmt.Errorf("audience %q contains white space", a)
		case slices.Contains(audiences, a):
			return nil, fmt.Errorf("audience %q given twice", a)
		}
		audiences = append(audiences, a)
	}
	return audiences, nil
}
