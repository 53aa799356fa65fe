// Pre-flight check of a recorded trace (CTF 1.8 or CTF 2) before babeltrace2 or the native
// decoder sees it: babeltrace2 hangs on truncated metadata, allocates without end on absurd array
// lengths, aborts on impossible packet sizes or timestamps, and refuses a whole trace for one
// damaged packet. The metadata is read into the one metadata model by its format's front-end
// (ctf/ctf_metadata.h; TSDL within TsdlLimits, and complete: not cut inside a declaration);
// then every packet's header and context, laid out from the model, is checked (magic, uuid,
// stream id, sizes within the file, timestamps). The trace is refused with one line naming the
// file and offset, or babeltrace2 is handed a cleaned view: a scratch directory where damaged
// packets (or the damaged tail of a stream) are dropped, each drop a loss on that stream's CPU.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace waitpath {

// Where dropped packets leave a hole: `cpu` lost events from `since_ns` (the end of the last
// good packet before the hole; INT64_MIN when none) on; the marker goes at `at_ns`.
struct StreamLoss {
  uint16_t cpu = 0;
  int64_t at_ns = std::numeric_limits<int64_t>::min();
  int64_t since_ns = std::numeric_limits<int64_t>::min();
};

// The packets babeltrace2 reads from one stream file: where each is in the original file (an
// error while reading the k-th names the file and that offset).
struct StreamPackets {
  std::string read_path;  // the file babeltrace2 opens (in the view when the stream was cleaned)
  std::string path;       // the trace's own file
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> read_offsets;  // the same packets' offsets in read_path
  std::vector<uint64_t> sizes;         // bytes (packet_size)
  // The packets' timestamp_begin and timestamp_end in ns of the trace's clock (INT64_MIN and
  // INT64_MAX when the context has none): what a capture cuts by (ctf/ctf_cut.h).
  std::vector<int64_t> begin_ns, end_ns;
  uint16_t cpu = 0;  // its first packet's cpu_id (else from its file name); later ones may differ
  // Its stream class and instance (packet header): babeltrace2 names a stream's port by them
  // when the instance is there, by its file otherwise.
  uint64_t stream_id = 0;
  std::optional<uint64_t> instance;
  // The packet_seq_num of its first packet kept, when the context has one: above 0, packets
  // before it were lost (damaged, or a relayd's rotated files overwritten).
  std::optional<uint64_t> first_seq;
};

// What a recorded trace's metadata is held to, for babeltrace2's sake: its size (either format),
// and for TSDL array lengths and nesting (the TSDL front-end's own bounds, ctf::TsdlBounds, are
// the native decoder's: it reads any array length a packet holds).
struct TsdlLimits {
  uint64_t max_array_length = 1u << 16;  // uuid[16], comm[16]...: real traces stay far below
  uint32_t max_depth = 32;               // nesting of structs, variants, enums, arrays
  uint64_t max_metadata_bytes = 64u << 20;
};

struct CheckedTrace {
  std::string dir;       // the trace as given
  std::string read_dir;  // what babeltrace2 reads: `dir`, or a cleaned view of it
  std::string metadata;  // the metadata text (decoded from packets when packetized)
  std::string uuid;      // the trace's uuid as written in the metadata ("" when none)
  std::string error;     // non-empty: the trace is refused (one line, names file and offset)
  std::vector<std::string> warnings;   // damage skipped, one line each (file and offset)
  std::vector<StreamLoss> losses;      // the holes the skipped damage leaves
  std::vector<StreamPackets> streams;  // when packets_checked
  uint64_t packets = 0;                // packets checked
  bool packets_checked = false;        // false: the packet layout was beyond this checker
};

// Checks the trace in `dir` (its metadata, packetized or text, and every stream file's
// packets). A cleaned view, when one is needed, is made in $TMPDIR (removed by RemoveViews()
// or at exit).
// `make_view` false: no view is made (read_dir stays `dir`; a capture copies the sound packets
// from the trace's own files by their `offsets`, and a relayd still writing a stream's last
// packet must not cost a copy of the stream).
CheckedTrace CheckTrace(const std::string& dir, const TsdlLimits& limits = {},
                        bool make_view = true);

// A view of `read_dir` (a trace or its view) in which the stream file `read_path` is without
// its bytes [cut_begin, cut_end) (a packet; cut_end past its size: the rest of it); "" and
// `error` on failure. Removed as the others.
std::string MakeCutView(const std::string& read_dir, const std::string& read_path,
                        uint64_t cut_begin, uint64_t cut_end, std::string* error);

// The TSDL text of trace directory `dir`'s metadata file, out of its packets when packetized
// (the 0x75D11D57 magic; compressed, encrypted or checksummed ones refused). False and one line
// naming the file (and offset) in `error` otherwise.
bool ReadMetadataText(const std::string& dir, uint64_t max_bytes, std::string* text,
                      std::string* error);
// The same from the metadata's bytes (live: as the relayd sends them); `name` names it in
// errors.
bool MetadataText(const std::string& name, std::string raw, std::string* text, std::string* error);

// Removes the cleaned views made so far.
void RemoveViews();

}  // namespace waitpath
