package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSumCallsAddsEveryCommandIncludingScriptCalls(t *testing.T) {
	info := "# Commandstats\r\n" +
		"cmdstat_evalsha:calls=10,usec=500,usec_per_call=50.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_hset:calls=30,usec=30,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n" +
		"cmdstat_client|setname:calls=2,usec=1,usec_per_call=0.50,rejected_calls=0,failed_calls=0\r\n"
	n, err := sumCalls(info)
	require.NoError(t, err)
	require.Equal(t, int64(42), n)

	_, err = sumCalls("# Commandstats\r\n")
	require.Error(t, err, "a reply without counts is not zero commands")
}

func TestPercentileIsNearestRank(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		p    float64
		want float64
	}{{0.5, 5}, {0.99, 10}, {0.1, 1}, {0, 1}, {1, 10}} {
		require.Equal(t, tc.want, percentile(sorted, tc.p), "p%v", tc.p*100)
	}
	require.Equal(t, 7.0, percentile([]float64{7}, 0.99))
}

func TestJobDataIsThePayloadAsJSON(t *testing.T) {
	require.JSONEq(t, `{"i":-1,"t":1700000000123456789}`, string(jobData(-1, 1700000000123456789)))
}
