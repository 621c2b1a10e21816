package processor_test

import (
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/jobmesh/jobmesh/localmesh"
)

// trafficKey is a series of jobmesh_p2p_pubsub_messages_total, or with
// event "kind" one of jobmesh_processor_job_channel_messages_total or
// jobmesh_macrojob_messages_total.
type trafficKey struct{ topic, event string }

// pubsubTraffic sums jobmesh_p2p_pubsub_messages_total over the running
// members of m.
func pubsubTraffic(b *testing.B, m *localmesh.Mesh) map[trafficKey]float64 {
	b.Helper()
	out := map[trafficKey]float64{}
	for _, mem := range m.Running() {
		memberTraffic(b, mem, out)
	}
	return out
}

// memberTraffic adds mem's jobmesh_p2p_pubsub_messages_total to out, and
// the Job channel's and the rooms' messages by kind as topics "job-<kind>"
// and "macrojob-<kind>" with event "kind", and its aggregates written
// (memberWrites); one gather of mem's metrics.
func memberTraffic(b *testing.B, mem *localmesh.Member, out map[trafficKey]float64) {
	b.Helper()
	families := memberFamilies(b, mem)
	memberWrites(families, out)
	for _, mt := range families["jobmesh_p2p_pubsub_messages_total"] {
		var k trafficKey
		for _, l := range mt.GetLabel() {
			switch l.GetName() {
			case "topic":
				k.topic = l.GetValue()
			case "event":
				k.event = l.GetValue()
			}
		}
		out[k] += mt.GetCounter().GetValue()
	}
	for family, topic := range map[string]string{
		"jobmesh_processor_job_channel_messages_total": "job-",
		"jobmesh_macrojob_messages_total":              "macrojob-",
	} {
		for _, mt := range families[family] {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "kind" {
					out[trafficKey{topic: topic + l.GetValue(), event: "kind"}] += mt.GetCounter().GetValue()
				}
			}
		}
	}
}

// memberWrites adds mem's MacroJob aggregates written
// (jobmesh_processor_aggregates_total) to out as topic "<type>-aggregate"
// with event "writes".
func memberWrites(families map[string][]*dto.Metric, out map[trafficKey]float64) {
	for _, mt := range families["jobmesh_processor_aggregates_total"] {
		for _, l := range mt.GetLabel() {
			if l.GetName() == "type" {
				out[trafficKey{topic: l.GetValue() + "-aggregate", event: "writes"}] += mt.GetCounter().GetValue()
			}
		}
	}
}

// memberDHTRequests is mem's jobmesh_p2p_dht_requests_total summed over
// the request types: the DHT requests it answered.
func memberDHTRequests(b *testing.B, mem *localmesh.Member) float64 {
	b.Helper()
	var n float64
	for _, mt := range memberFamilies(b, mem)["jobmesh_p2p_dht_requests_total"] {
		n += mt.GetCounter().GetValue()
	}
	return n
}

// memberFamilies is every series of mem's metrics, by family name.
func memberFamilies(b *testing.B, mem *localmesh.Member) map[string][]*dto.Metric {
	b.Helper()
	families, err := mem.Metrics.Gather()
	if err != nil {
		b.Fatal(err)
	}
	out := make(map[string][]*dto.Metric, len(families))
	for _, f := range families {
		out[f.GetName()] = f.GetMetric()
	}
	return out
}
