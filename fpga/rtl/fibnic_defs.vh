// FIBNIC device constants shared by the RTL modules (included inside module
// bodies). Values come from docs/contract/FIBNIC.md and must equal
// hwif/fibnic_regs.h; the bench reads them back over the BAR and compares.
// Each module uses some of these; the rest are not warnings.
/* verilator lint_off UNUSEDPARAM */
localparam [31:0] FIBNIC_ID      = 32'h4E424946;  // 'F','I','B','N'
localparam [31:0] FIBNIC_VERSION = 32'h00010000;  // v1.0

// BAR0 byte offsets (bits [24:0] of the PCI address).
localparam [24:0] OFF_ID         = 25'h000000;
localparam [24:0] OFF_VERSION    = 25'h000004;
localparam [24:0] OFF_CAPS0      = 25'h000008;
localparam [24:0] OFF_CAPS1      = 25'h00000C;
localparam [24:0] OFF_CAPS2      = 25'h000010;
localparam [24:0] OFF_CONTROL    = 25'h000014;
localparam [24:0] OFF_GENERATION = 25'h000018;
localparam [24:0] OFF_SCRATCH    = 25'h00001C;
localparam [24:0] OFF_PORT_MAC   = 25'h000040;  // + 8p
localparam [24:0] OFF_COUNTERS   = 25'h000100;  // + 64p, eight u64
localparam [24:0] OFF_DROP_COUNTERS = 25'h000800;  // + 8p, one u64 (CAPS2 DROP)
localparam [31:0] CAPS2_DROP     = 32'h00010000;  // NEXTHOP DROP flag and DROP_COUNTERS implemented
localparam [24:0] OFF_NEXTHOP    = 25'h001000;  // + 16i
localparam [24:0] OFF_TCAM6      = 25'h002000;  // + 32i
localparam [24:0] OFF_NEIGH      = 25'h004000;  // + 32i
localparam [24:0] OFF_SRAM4      = 25'h1000000;

// Punt reasons (tag byte 1); same numbers as fpga/model/punt_reason.h.
// R_DROP never reaches a tag: its frame is not sent.
localparam [4:0] R_FORWARD    = 5'd0;
localparam [4:0] R_RUNT       = 5'd1;
localparam [4:0] R_BROADCAST  = 5'd2;
localparam [4:0] R_MULTICAST  = 5'd3;
localparam [4:0] R_OWN_MAC    = 5'd4;
localparam [4:0] R_ARP        = 5'd5;
localparam [4:0] R_NON_IP     = 5'd6;
localparam [4:0] R_IP_HEADER  = 5'd7;
localparam [4:0] R_IP_OPTIONS = 5'd8;
localparam [4:0] R_CHECKSUM   = 5'd9;
localparam [4:0] R_TTL        = 5'd10;
localparam [4:0] R_NDP        = 5'd11;
localparam [4:0] R_DISABLED   = 5'd12;
localparam [4:0] R_NO_TCAM    = 5'd13;
localparam [4:0] R_CODE0      = 5'd14;
localparam [4:0] R_NH_INVALID = 5'd15;
localparam [4:0] R_NEIGH_MISS = 5'd16;
localparam [4:0] R_PORT       = 5'd17;
localparam [4:0] R_DROP       = 5'd18;  // VALID|DROP entry: discarded, no output
/* verilator lint_on UNUSEDPARAM */
