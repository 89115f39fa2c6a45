package metricsauth_test

import (
	"testing"

	. "github.com/onsi/gomega"

	"sunstrider.cn/operator/internal/metricsauth"
)

func TestParseAudiences(t *testing.T) {
	for _, tc := range []struct {
		value   string
		want    []string
		wantErr string
	}{
		{value: "", want: nil},
		{value: "  ", want: nil},
		{value: "sunstrider-operator-metrics", want: []string{"sunstrider-operator-metrics"}},
		{value: " https://kubernetes.default.svc , metrics ", want: []string{"https://kubernetes.default.svc", "metrics"}},
		{value: "a,,b", wantErr: `empty audience in "a,,b"`},
		{value: "a,", wantErr: `empty audience in "a,"`},
		{value: "a b", wantErr: `audience "a b" contains white space`},
		{value: "a,b,a", wantErr: `audience "a" given twice`},
	} {
		t.Run(tc.value, func(t *testing.T) {
			g := NewWithT(t)
			got, err := metricsauth.ParseAudiences(tc.value)
			if tc.wantErr != "" {
				g.Expect(err).To(MatchError(tc.wantErr))
				return
			}
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(tc.want))
		})
	}
}
