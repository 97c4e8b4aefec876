package redisstore

// ReplyCode names a script's reply code for the tests of package
// redisstore_test, which run scripts directly.
func ReplyCode(lua string) int64 {
	for _, c := range replyCodes {
		if c.lua == lua {
			return int64(c.code)
		}
	}
	panic("redisstore: no reply code " + lua)
}
