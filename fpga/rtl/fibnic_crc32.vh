// IEEE 802.3 CRC-32, reflected, one byte per clock (included inside modules).
// The register starts at all ones; a frame whose FCS is correct leaves the
// residue 32'hDEBB20E3 after its FCS bytes went through as well.
/* verilator lint_off UNUSEDPARAM */
localparam [31:0] CRC_RESIDUE = 32'hDEBB20E3;
/* verilator lint_on UNUSEDPARAM */

function automatic [31:0] crc32_byte(input [31:0] crc, input [7:0] data);
  integer b;
  reg [31:0] c;
  begin
    c = crc ^ {24'd0, data};
    for (b = 0; b < 8; b = b + 1)
      c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
    crc32_byte = c;
  end
endfunction
