// Package v20170312 has the few types and calls of Tencent Cloud's VPC API
// that Flannel's tencent-vpc backend uses, each call failing: the SDK is
// not on the Go module proxy, and cnperf's local cluster runs Flannel's
// vxlan and host-gw backends only.
package v20170312

import "errors"

var errStub = errors.New("the tencent-vpc backend is not built into cnperf's flanneld (its SDK is not on the Go module proxy)")

type Filter struct {
	Name   *string
	Values []*string
}

type Route struct {
	DestinationCidrBlock *string
	GatewayType          *string
	GatewayId            *string
	RouteType            *string
	Enabled              *bool
	RouteId              *uint64
}

type RouteTable struct {
	RouteTableId *string
	RouteSet     []*Route
}

type DescribeRouteTablesRequest struct{ Filters []*Filter }

type DescribeRouteTablesResponse struct {
	Response *struct{ RouteTableSet []*RouteTable }
}

type DeleteRoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type DeleteRoutesResponse struct{}

type CreateRoutesRequest struct {
	RouteTableId *string
	Routes       []*Route
}

type CreateRoutesResponse struct{}

type Client struct{}

func NewClientWithSecretId(id, key, region string) (*Client, error) { return &Client{}, errStub }

func NewDescribeRouteTablesRequest() *DescribeRouteTablesRequest {
	return &DescribeRouteTablesRequest{}
}
func NewDeleteRoutesRequest() *DeleteRoutesRequest { return &DeleteRoutesRequest{} }
func NewCreateRoutesRequest() *CreateRoutesRequest { return &CreateRoutesRequest{} }

func (*Client) DescribeRouteTables(*DescribeRouteTablesRequest) (*DescribeRouteTablesResponse, error) {
	return nil, errStub
}
func (*Client) DeleteRoutes(*DeleteRoutesRequest) (*DeleteRoutesResponse, error) { return nil, errStub }
func (*Client) CreateRoutes(*CreateRoutesRequest) (*CreateRoutesResponse, error) { return nil, errStub }
