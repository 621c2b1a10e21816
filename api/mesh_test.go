package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/assemble"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/internal/wait"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/meshtest"
	"github.com/jobmesh/jobmesh/node"
)

// mandelbrot is a small picture job: 4×3 tiles of 16×16 pixels.
type mandelbrot struct{ meshtest.Mandelbrot }

func newMandelbrot(t *testing.T) mandelbrot {
	return mandelbrot{meshtest.NewMandelbrot(t, 64, 48, 16)}
}

func (j mandelbrot) spec(price *big.Int) dapp.Spec {
	return dapp.Spec{
		Code: j.Code, Data: j.Data,
		Slicing:  jobs.Slicing{BlockSize: tiles.DescriptorSize, MicroJobs: 2, BlocksPerMicro: 3},
		Price:    price,
		Deadline: time.Now().Add(time.Hour),
		Output:   jobs.Output{Kind: jobs.OutputPNGGrid, Columns: uint32(j.Params.Columns())},
	}
}

// pictureMesh starts 3 processors, a submitting client and the dev chain,
// and serves the client's API.
func pictureMesh(t *testing.T) (*localmesh.Mesh, *localmesh.Member, *httptest.Server) {
	t.Helper()
	m := meshtest.New(t, localmesh.Options{
		Processors: 3, Clients: 1, Chain: &localmesh.ChainOptions{},
		Timers: localmesh.Timers{Poll: 200 * time.Millisecond, DiscloseGrace: 2 * time.Second},
	})
	var client *localmesh.Member
	for _, mem := range m.Running() {
		if mem.Role == node.RoleClient {
			client = mem
		}
	}
	srv := httptest.NewServer(nodeHandler(client.Node))
	t.Cleanup(srv.Close)
	return m, client, srv
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

var stateRank = map[apiv1.JobState]int{
	apiv1.JobUnfunded: 0, apiv1.JobOpen: 1, apiv1.JobRunning: 2, apiv1.JobVerified: 3, apiv1.JobSettled: 4,
}

// TestPictureJobOverTheAPI runs a Mandelbrot job on a mesh with a chain
// and follows it through the API: the event stream from submission to
// settlement, then the output, the tile picture and the metrics.
func TestPictureJobOverTheAPI(t *testing.T) {
	pic := newMandelbrot(t)
	want := pic.Local(t)
	m, client, srv := pictureMesh(t)
	ctx := context.Background()

	stream := openSSE(t, srv.URL+"/v1/events")
	// Published but not funded: processors leave it alone, so it has no
	// output yet.
	price := big.NewInt(2_000_000_000)
	spec := pic.spec(price)
	spec.FundLater = true
	info, err := client.DApp.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID().String()
	if j := stream.next(t, 30*time.Second, func(j apiv1.Job) bool { return j.ID == id }); j.State != apiv1.JobUnfunded || !j.Mine {
		t.Fatalf("first event of the job: %+v", j)
	}
	for _, path := range []string{"/output", "/tiles.png"} {
		var e api.Error
		getJSON(t, srv.URL+"/v1/jobs/"+id+path, http.StatusConflict, &e)
		if !strings.Contains(e.Error, "no verified output") {
			t.Fatalf("%s before the verdict: %q", path, e.Error)
		}
	}
	follow := openSSE(t, srv.URL+"/v1/events?job="+id)
	if err := client.DApp.Fund(ctx, info); err != nil {
		t.Fatal(err)
	}

	t.Run("events", func(t *testing.T) {
		last := apiv1.Job{State: apiv1.JobUnfunded}
		j := follow.next(t, 3*time.Minute, func(j apiv1.Job) bool {
			if j.ID != id {
				t.Fatalf("followed %s, got %s", id, j.ID)
			}
			if stateRank[j.State] < stateRank[last.State] || j.Committed < last.Committed || j.Disclosed < last.Disclosed {
				t.Fatalf("job went back from %s (%d/%d) to %s (%d/%d)", last.State, last.Committed, last.Disclosed, j.State, j.Committed, j.Disclosed)
			}
			last = j
			return j.State == apiv1.JobSettled
		})
		if !j.Verified || j.Committed != j.MicroJobs || j.Disclosed != j.MicroJobs || j.SettlementTx == "" || j.OutputCID == "" {
			t.Fatalf("settled event: %+v", j)
		}
		var polled apiv1.Job
		getJSON(t, srv.URL+"/v1/jobs/"+id, http.StatusOK, &polled)
		if polled.State != apiv1.JobSettled || polled.OutputCID != j.OutputCID || polled.SettlementTx != j.SettlementTx {
			t.Fatalf("the stream's last summary %+v differs from GET /v1/jobs/{id}: %+v", j, polled)
		}
		// The all-jobs stream saw the same end.
		stream.next(t, 30*time.Second, func(j apiv1.Job) bool { return j.ID == id && j.State == apiv1.JobSettled })
	})
	if t.Failed() {
		return
	}
	var j apiv1.Job
	getJSON(t, srv.URL+"/v1/jobs/"+id, http.StatusOK, &j)

	t.Run("output", func(t *testing.T) {
		checkOutput(t, srv.URL, id, want, j)
	})

	t.Run("tiles", func(t *testing.T) {
		checkTiles(t, srv.URL, id, j)
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, path := range []string{"/output", "/tiles.png"} {
			var e api.Error
			getJSON(t, srv.URL+"/v1/jobs/"+strings.Repeat("ab", 32)+path, http.StatusNotFound, &e)
			if !strings.Contains(e.Error, "no such job") {
				t.Fatalf("%s of an unknown job: %q", path, e.Error)
			}
			getJSON(t, srv.URL+"/v1/jobs/xyz"+path, http.StatusBadRequest, &e)
			if !strings.Contains(e.Error, "job ID") {
				t.Fatalf("%s with a bad ID: %q", path, e.Error)
			}
		}
		var e api.Error
		getJSON(t, srv.URL+"/v1/events?job=xyz", http.StatusBadRequest, &e)
	})

	t.Run("metrics", func(t *testing.T) {
		checkMetrics(t, m, srv.URL, j)
	})

	t.Run("dashboard", func(t *testing.T) {
		checkDashboard(t, m, client, srv.URL, id)
	})

	t.Run("failed job", func(t *testing.T) {
		checkFailedJob(t, m, client, srv.URL)
	})
}

// checkOutput checks GET /v1/jobs/{id}/output of settled job j: the
// picture computed locally (want), under its CID, and 304 for a client
// that holds it.
func checkOutput(t *testing.T, base, id string, want []byte, j apiv1.Job) {
	resp, body := get(t, base+"/v1/jobs/"+id+"/output")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("output: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, want) {
		t.Fatal("the mesh's picture differs from the local computation")
	}
	if resp.Header.Get("X-Content-CID") != j.OutputCID {
		t.Fatalf("output CID header %q, summary %q", resp.Header.Get("X-Content-CID"), j.OutputCID)
	}
	// Content-addressed: a client holding it gets 304.
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/jobs/"+id+"/output", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	r2, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != http.StatusNotModified {
		t.Fatalf("conditional GET: %d", r2.StatusCode)
	}
}

// checkTiles checks the tile picture of settled job j and its legend of
// processor colours.
func checkTiles(t *testing.T, base, id string, j apiv1.Job) {
	resp, body := get(t, base+"/v1/jobs/"+id+"/tiles.png")
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("tiles: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	img, err := png.Decode(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	// The 64×48 grid of tiles, and the legend below it.
	legend := resp.Header.Get("X-Tile-Legend")
	entries := strings.Split(legend, ",")
	if legend == "" || len(entries) > len(j.ByProcessor) {
		t.Fatalf("legend %q for processors %v", legend, j.ByProcessor)
	}
	if b := img.Bounds(); b.Dx() < 64 || b.Dy() <= 48+16*len(entries) {
		t.Fatalf("tile picture bounds %v: no 64×48 grid with a legend of %d rows", b, len(entries))
	}
	swatches := map[color.NRGBA]bool{}
	for y := 48; y < img.Bounds().Max.Y; y++ {
		for x := 0; x < 16; x++ {
			swatches[color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)] = true
		}
	}
	for i, e := range entries {
		p, colour, ok := strings.Cut(e, "=")
		c := assemble.ProcessorColour(i)
		if !ok || j.ByProcessor[p] == 0 || colour != fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) {
			t.Fatalf("legend entry %q", e)
		}
		if !swatches[c] {
			t.Errorf("the picture's legend has no swatch of %s's colour %v", p, c)
		}
	}
}

// checkDashboard opens /ui in headless Chromium at 1280×800 once the job
// is settled and checks what the page shows, then keeps its DOM and a
// screenshot under the test's temp dir.
func checkDashboard(t *testing.T, m *localmesh.Mesh, client *localmesh.Member, base, id string) {
	b := startBrowser(t, 1280, 800)
	b.navigate(base + "/ui") // redirects to /ui/
	type pageState struct {
		Ready, Row, Picture, Tiles string
		Width                      int
	}
	var st pageState
	wait.Until(t, time.Minute, func() error {
		raw := b.eval(`(() => {
			const row = document.querySelector('tr.job[data-job="` + id + `"]');
			const pic = document.getElementById("picture"), tiles = document.getElementById("tiles");
			if (!pic || !tiles) return {Ready: "loading"};
			return {Ready: document.body.dataset.ready, Row: row ? row.dataset.state : "",
				Picture: pic.dataset.loaded || "", Tiles: tiles.dataset.loaded || "", Width: pic.naturalWidth};
		})()`)
		if err := json.Unmarshal(raw, &st); err != nil {
			return err
		}
		if st.Ready != "true" || st.Row != string(apiv1.JobSettled) || st.Picture != "true" || st.Tiles != "true" {
			return fmt.Errorf("page not ready: %+v", st)
		}
		return nil
	})
	if st.Width != 64 {
		t.Fatalf("the picture is %d pixels wide, want 64", st.Width)
	}
	checkDashboardTiles(t, b, id)
	// JOBMESH_TEST_ARTIFACTS keeps the DOM and screenshot after the test.
	dir := os.Getenv("JOBMESH_TEST_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The page polls the node: wait until it shows every member (the
	// DOM is written each time, for a failure to show).
	wait.Until(t, 30*time.Second, func() error {
		dom := b.dom()
		if err := os.WriteFile(filepath.Join(dir, "dashboard.html"), []byte(dom), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`data-job="` + id + `" data-state="settled"`,
			`<span class="state state-settled">settled</span>`,
			`id="picture" alt="assembled output" data-loaded="true" src="/v1/jobs/` + id + `/output"`,
			`id="live" class="pill pill-live"`,
		} {
			if !strings.Contains(dom, want) {
				return fmt.Errorf("the dashboard's DOM (in %s) lacks %s", dir, want)
			}
		}
		for _, mem := range m.Running() {
			switch mem.Role {
			case node.RoleProcessor:
				if !strings.Contains(dom, `class="card processor" data-peer="`+mem.Host.ID().String()+`"`) {
					return fmt.Errorf("processor %s is not listed (DOM in %s)", mem.Host.ID(), dir)
				}
			case node.RoleBootstrap:
				if !strings.Contains(dom, `class="peer" data-peer="`+mem.Host.ID().String()+`"`) {
					return fmt.Errorf("peer %s (bootstrap) is not listed (DOM in %s)", mem.Host.ID(), dir)
				}
			}
		}
		return nil
	})

	shot := b.screenshot()
	path := filepath.Join(dir, "dashboard.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 800 {
		t.Fatalf("screenshot is %v, want 1280×800", img.Bounds())
	}
	colours := map[color.Color]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && len(colours) < 64; y += 7 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 7 {
			colours[color.NRGBAModel.Convert(img.At(x, y))] = true
		}
	}
	if len(colours) < 16 {
		t.Fatalf("the screenshot is nearly blank: %d colours", len(colours))
	}
	t.Logf("dashboard DOM and screenshot in %s", dir)
	checkDashboardTextJob(t, b, client, id)
}

// pictureState is what the dashboard's picture panel shows.
type pictureState struct {
	Job, Row, Shown, Picture, Tiles      string
	TilesHeight                          int
	Legend, Shares, Payouts, PayoutPeers []string
}

func (b *browser) pictures(id string) pictureState {
	b.t.Helper()
	var st pictureState
	raw := b.eval(`(() => {
		const row = document.querySelector('tr.job[data-job="` + id + `"]');
		const panel = document.getElementById("pictures"), pic = document.getElementById("picture"), tiles = document.getElementById("tiles");
		return {Job: document.getElementById("detail-id").textContent, Row: row ? row.dataset.state : "",
			Shown: panel.hidden ? "hidden" : getComputedStyle(panel).display,
			Picture: pic.dataset.loaded || "", Tiles: tiles.dataset.loaded || "", TilesHeight: tiles.naturalHeight,
			Legend: [...document.querySelectorAll("#tile-legend li")].map((li) => li.dataset.peer),
			Shares: [...document.querySelectorAll("#detail-shares li")].map((li) => li.dataset.peer),
			Payouts: [...document.querySelectorAll("#detail-fields .payout")].map((p) => p.dataset.wallet),
			PayoutPeers: [...document.querySelectorAll("#detail-fields .payout")].map((p) => p.dataset.peer)};
	})()`)
	if err := json.Unmarshal(raw, &st); err != nil {
		b.t.Fatal(err)
	}
	return st
}

// checkDashboardTiles: the settled picture job shows its tile map, the
// picture's own legend below the 64×48 tiles, and the page's legend of
// processors; its payouts name the peer each wallet is bound to, as the
// legend of MicroJobs by processor does.
func checkDashboardTiles(t *testing.T, b *browser, id string) {
	var st pictureState
	wait.Until(t, time.Minute, func() error {
		st = b.pictures(id)
		if st.Job != id || st.Shown != "flex" || st.Tiles != "true" || len(st.Legend) == 0 || len(st.Payouts) == 0 || slices.Contains(st.PayoutPeers, "") {
			return fmt.Errorf("picture job: %+v", st)
		}
		return nil
	})
	if st.TilesHeight <= 48 {
		t.Errorf("the tile map is %d pixels high: no legend below its 48", st.TilesHeight)
	}
	for _, p := range st.PayoutPeers {
		if !slices.Contains(st.Shares, p) {
			t.Errorf("a payout names peer %s, which the legend of MicroJobs by processor %v does not", p, st.Shares)
		}
	}
}

// checkDashboardTextJob: once a text job is selected, open and then
// cancelled, the pictures of the picture job before it are hidden.
func checkDashboardTextJob(t *testing.T, b *browser, client *localmesh.Member, pictureID string) {
	ctx := context.Background()
	info, err := client.DApp.Submit(ctx, dapp.Spec{
		Code: wordcount(t), Data: text,
		Slicing:      jobs.Slicing{BlockSize: 128, MicroJobs: 2, BlocksPerMicro: 1},
		Price:        big.NewInt(2_000_000_000),
		Deadline:     time.Now().Add(time.Hour),
		Output:       jobs.Output{Kind: jobs.OutputConcat},
		Requirements: jobs.Requirements{MinVRAMMiB: 1 << 20}, // no processor takes it: it stays open
	})
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID().String()
	// Select the text job by its row, as a user would.
	wait.Until(t, time.Minute, func() error {
		var clicked bool
		if err := json.Unmarshal(b.eval(`(() => {
			const row = document.querySelector('tr.job[data-job="`+id+`"]');
			if (row) row.click();
			return !!row;
		})()`), &clicked); err != nil || !clicked {
			return fmt.Errorf("no row for job %s yet (%v)", id, err)
		}
		return nil
	})
	for _, state := range []apiv1.JobState{apiv1.JobOpen, apiv1.JobCancelled} {
		if state == apiv1.JobCancelled {
			if err := client.DApp.Cancel(ctx, info.ID()); err != nil {
				t.Fatal(err)
			}
		}
		var st pictureState
		wait.Until(t, time.Minute, func() error {
			st = b.pictures(id)
			if st.Job != id || st.Row != string(state) {
				return fmt.Errorf("text job %s: %+v", state, st)
			}
			return nil
		})
		if st.Shown != "hidden" {
			t.Errorf("the %s text job shows the pictures panel (display %s) of job %s", state, st.Shown, pictureID)
		}
		var visible int
		if err := json.Unmarshal(b.eval(`[...document.querySelectorAll("#pictures img")].filter((i) => i.offsetParent !== null).length`), &visible); err != nil || visible != 0 {
			t.Errorf("the %s text job shows %d images of job %s (%v)", state, visible, pictureID, err)
		}
	}
}

// scrape reads a node's /metrics: each series ("name{labels}") and its
// value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, body := get(t, url+"/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		var v float64
		if _, err := fmt.Sscan(line[i+1:], &v); err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// sum adds the series of name whose labels include every one of labels
// (each written as in the exposition, e.g. `state="settled"`); ok is false
// when there is no such series.
func sum(series map[string]float64, name string, labels ...string) (total float64, ok bool) {
	for k, v := range series {
		n, ls, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		match := true
		for _, l := range labels {
			match = match && strings.Contains(ls, l)
		}
		if match {
			total += v
			ok = true
		}
	}
	return total, ok
}

// checkMetrics: after the job, the client's /metrics counts it by state,
// its escrow calls, its store and its block layer; the processors' count
// MicroJobs and queue events.
func checkMetrics(t *testing.T, m *localmesh.Mesh, base string, j apiv1.Job) {
	c := scrape(t, base)
	for _, want := range []struct {
		name   string
		labels []string
		min    float64
	}{
		{"jobmesh_api_jobs", []string{`state="settled"`}, 1},
		{"jobmesh_api_jobs", []string{`state="running"`}, 0},
		{"jobmesh_api_event_streams", nil, 0},
		{"jobmesh_escrow_transactions_total", []string{`method="createJob"`}, 1},
		{"jobmesh_escrow_reads_total", []string{`method="getJob"`, `outcome="ok"`}, 1},
		{"jobmesh_escrow_reads_total", []string{`method="logs"`}, 1},
		{"jobmesh_crdt_heads", nil, 1},
		{"jobmesh_crdt_max_height", nil, 1},
		{"jobmesh_crdt_records_put_total", nil, 1},
		// The output checkOutput fetched came from the processors.
		{"jobmesh_ipfs_bitswap_blocks_received_total", nil, 1},
		{"jobmesh_ipfs_bitswap_bytes_received_total", nil, 1},
		{"jobmesh_ipfs_files_added_total", nil, 2}, // the job's code and data
	} {
		got, ok := sum(c, want.name, want.labels...)
		if !ok || got < want.min {
			t.Errorf("client /metrics: %s%v = %v (listed %v), want at least %v", want.name, want.labels, got, ok, want.min)
		}
	}
	if got, _ := sum(c, "jobmesh_api_jobs"); got != 1 {
		t.Errorf("client counts %v jobs, want 1", got)
	}

	var micro, locks, handoffs, sent float64
	for _, mem := range m.Running() {
		if mem.Role != node.RoleProcessor {
			continue
		}
		srv := httptest.NewServer(nodeHandler(mem.Node))
		p := scrape(t, srv.URL)
		srv.Close()
		n, _ := sum(p, "jobmesh_processor_microjobs_total", `outcome="ok"`)
		micro += n
		n, _ = sum(p, "jobmesh_ipfs_bitswap_blocks_sent_total")
		sent += n
		n, ok := sum(p, "jobmesh_macrojob_queue_events_total", `event="lock"`)
		if !ok {
			t.Errorf("processor %d lists no queue events", mem.Index)
		}
		locks += n
		n, _ = sum(p, "jobmesh_macrojob_queue_events_total", `event="handoff"`)
		handoffs += n
	}
	// The rooms queue the regular MicroJobs; each MacroJob's verifier is
	// run outside its room.
	total, regular := float64(j.MicroJobs), float64(j.MicroJobs-j.MacroJobs)
	if micro < total || locks < regular {
		t.Errorf("processors counted %v committed MicroJobs, %v queue locks; the job has %v MicroJobs, %v of them regular", micro, locks, total, regular)
	}
	if sent < 1 {
		t.Errorf("processors sent %v blocks over bitswap; the client fetched the output from them", sent)
	}
	t.Logf("queue handoffs across processors: %v", handoffs)
}
