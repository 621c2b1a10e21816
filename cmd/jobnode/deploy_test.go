package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReleaseBuildIsOneScript keeps the Dockerfile honest: its build stage
// and CI's release build both run scripts/build.sh, and nothing else builds
// the binary there, so the CI step builds what the image ships.
func TestReleaseBuildIsOneScript(t *testing.T) {
	root := filepath.Join("..", "..")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	docker, ci, script := read("Dockerfile"), read(".ci/run"), read("scripts/build.sh")
	if !regexp.MustCompile(`(?m)^RUN scripts/build\.sh /out/jobnode\b`).MatchString(docker) {
		t.Error("the Dockerfile's build stage does not run scripts/build.sh /out/jobnode")
	}
	if !regexp.MustCompile(`(?m)^COPY --from=build /out/jobnode `).MatchString(docker) {
		t.Error("the Dockerfile's final stage does not copy the binary scripts/build.sh built")
	}
	if !regexp.MustCompile(`(?m)^scripts/build\.sh `).MatchString(ci) {
		t.Error(".ci/run does not run scripts/build.sh")
	}
	for name, text := range map[string]string{"Dockerfile": docker, ".ci/run": ci} {
		if strings.Contains(text, "go build") {
			t.Errorf("%s runs go build itself: build the binary with scripts/build.sh", name)
		}
	}
	if strings.Count(script, "go build") != 1 || !strings.Contains(script, "./cmd/jobnode") {
		t.Error("scripts/build.sh must hold the one go build of ./cmd/jobnode")
	}
	// The image's runtime user and the volume the repo lives in.
	for _, want := range []string{"USER nonroot", "VOLUME /var/lib/jobmesh", "ENV JOBMESH_REPO=/var/lib/jobmesh", "EXPOSE 4001/tcp 4001/udp"} {
		if !strings.Contains(docker, want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
}
