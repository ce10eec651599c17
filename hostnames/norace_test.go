//go:build !race

package hostnames

const raceBuild = false
