// TCAM6: ENTRIES ternary entries over the first 64 bits of an IPv6
// destination. The lowest-index VALID entry with (key & mask) == value wins.
// Entry layout (32 bytes): value (8, network order), mask (8), code, flags;
// bytes 18..31 reserved (read 0). Lookup: compare registered, then priority
// encoded: result 2 clocks after the key.
module fibnic_tcam6 #(
    parameter ENTRIES = 32,
    localparam IW = (ENTRIES > 1) ? $clog2(ENTRIES) : 1
) (
    input  wire            clk,
    input  wire            host_we,
    input  wire [IW+2:0]   host_word,     // entry * 8 + word
    input  wire [31:0]     host_wdata,
    input  wire [3:0]      host_wstrb,
    input  wire [IW+2:0]   host_rword,
    output reg  [31:0]     host_rdata,
    input  wire [63:0]     lk_key,
    output reg             lk_hit,
    output reg  [7:0]      lk_index,
    output reg  [7:0]      lk_code
);
  reg [31:0] words [0:ENTRIES*5-1];   // words 0..4 of every entry, entry-major

  function automatic [63:0] be64(input [31:0] lo_word, input [31:0] hi_word);
    // BAR bytes 0..7 (little-endian words) -> 64-bit value, byte 0 most significant.
    be64 = {lo_word[7:0], lo_word[15:8], lo_word[23:16], lo_word[31:24],
            hi_word[7:0], hi_word[15:8], hi_word[23:16], hi_word[31:24]};
  endfunction

  wire [IW-1:0] we_entry = host_word[IW+2:3];
  wire [IW-1:0] rd_entry = host_rword[IW+2:3];
  integer b;
  always @(posedge clk) begin
    if (host_we && host_word[2:0] < 3'd5)
      for (b = 0; b < 4; b = b + 1)
        if (host_wstrb[b]) words[we_entry * 5 + {{(IW-1){1'b0}}, host_word[2:0]}][8*b +: 8] <= host_wdata[8*b +: 8];
    if (host_rword[2:0] < 3'd5) host_rdata <= words[rd_entry * 5 + {{(IW-1){1'b0}}, host_rword[2:0]}];
    else host_rdata <= 32'd0;
  end

  reg [ENTRIES-1:0] match;
  integer i;
  always @(posedge clk) begin
    for (i = 0; i < ENTRIES; i = i + 1)
      match[i] <= words[i*5+4][8] &&
                  ((lk_key & be64(words[i*5+2], words[i*5+3])) == be64(words[i*5], words[i*5+1]));
  end

  always @(posedge clk) begin : prio
    reg found;
    found = 1'b0;
    lk_hit <= 1'b0;
    lk_index <= 8'hff;
    lk_code <= 8'd0;
    for (i = 0; i < ENTRIES; i = i + 1)
      if (!found && match[i]) begin
        found = 1'b1;
        lk_hit <= 1'b1;
        lk_index <= i[7:0];
        lk_code <= words[i*5+4][7:0];
      end
  end
endmodule
