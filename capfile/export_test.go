package capfile

// GeneralPath has s take the general path for every frame (Stream.general):
// the reference its fast paths and its merge are checked against.
func GeneralPath(s *Stream) { s.general = true }
