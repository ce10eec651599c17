package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// pdnsAPIBench: clients callers at once, each PATCHing ops/clients new
// names into the zone (one rrset REPLACE of an A record per request, as a
// create), then each of them again to a new address (as an update).
func pdnsAPIBench(s *server, key string, clients, ops int) (create, update latencies, err error) {
	c := newClient(s, "")
	path := "/api/v1/servers/localhost/zones/" + zone + "."
	patch := func(name, ip string) error {
		body, _ := json.Marshal(map[string]any{"rrsets": []map[string]any{{
			"name": name, "type": "A", "ttl": 60, "changetype": "REPLACE",
			"records": []map[string]any{{"content": ip, "disabled": false}},
		}}})
		req, _ := http.NewRequest("PATCH", c.base+path, bytes.NewReader(body))
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := c.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusNoContent {
			return fmt.Errorf("PATCH %s: %s %s", name, resp.Status, b)
		}
		return nil
	}
	per := ops / clients
	label := func(c, i int) string { return fmt.Sprintf("p%02d-%05d.%s.", c, i, zone) }
	if create, err = parallel(clients, per, func(c, i int) error { return patch(label(c, i), publicAddr(c, i, 0)) }); err != nil {
		return create, update, err
	}
	update, err = parallel(clients, per, func(c, i int) error { return patch(label(c, i), publicAddr(c, i, 1)) })
	return create, update, err
}
