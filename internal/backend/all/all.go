// Package all registers every backend; import it for its side effects.
package all

import (
	_ "github.com/cnperf/cnperf/internal/backend/docker"     // docker
	_ "github.com/cnperf/cnperf/internal/backend/dockerlab"  // docker-lab
	_ "github.com/cnperf/cnperf/internal/backend/kubernetes" // kubernetes
	_ "github.com/cnperf/cnperf/internal/backend/labbackend" // lab
)
