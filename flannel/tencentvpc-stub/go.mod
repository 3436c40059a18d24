// Module vpc stands in for Tencent Cloud's VPC SDK, which the Go module
// proxy does not serve: flanneld links Flannel's tencent-vpc backend, and
// cnperf never runs it. Every call fails; see ../go.mod.
module github.com/tencentcloud/tencentcloud-sdk-go/tencentcloud/vpc

go 1.22
