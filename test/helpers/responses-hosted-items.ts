/**
 * One Responses item of each hosted family, as OpenAI's published schema
 * takes it: shared by the format's own tests and the hosted-tool tests.
 */
export const RESPONSES_ITEMS: Record<string, unknown>[] = [
  {
    type: "web_search_call",
    id: "ws_1",
    status: "completed",
    action: { type: "search", query: "x" },
  },
  {
    type: "file_search_call",
    id: "fs_1",
    status: "completed",
    queries: ["q"],
    results: [{ file_id: "f", text: "t" }],
  },
  {
    type: "code_interpreter_call",
    id: "ci_1",
    status: "completed",
    code: "print(1)",
    container_id: "c",
    outputs: [{ type: "logs", logs: "1" }],
  },
  { type: "image_generation_call", id: "ig_1", status: "completed", result: "aGVsbG8=" },
  {
    type: "mcp_list_tools",
    id: "ml_1",
    server_label: "s",
    tools: [{ name: "t", input_schema: {} }],
  },
  {
    type: "mcp_call",
    id: "mc_1",
    server_label: "s",
    name: "t",
    arguments: '{"a": 1}',
    output: "done",
  },
  {
    type: "computer_call",
    id: "cu_1",
    call_id: "call_c",
    status: "completed",
    pending_safety_checks: [],
    action: { type: "screenshot" },
  },
  {
    type: "computer_call_output",
    call_id: "call_c",
    output: { type: "computer_screenshot", image_url: "https://example.com/s.png" },
  },
  { type: "mcp_approval_request", id: "mar_1", server_label: "s", name: "t", arguments: "{}" },
  {
    type: "mcp_approval_response",
    approval_request_id: "mar_1",
    request_id: "mar_1",
    approve: true,
  },
  { type: "custom_tool_call", call_id: "call_x", name: "grammar", input: "abc" },
  { type: "custom_tool_call_output", call_id: "call_x", output: "ok" },
  {
    type: "local_shell_call",
    id: "ls_1",
    call_id: "call_l",
    status: "completed",
    action: { type: "exec", command: ["ls"], env: {} },
  },
  { type: "local_shell_call_output", id: "call_l", call_id: "call_l", output: "a\nb" },
  { type: "shell_call", call_id: "call_s", action: { commands: ["ls"] } },
  {
    type: "shell_call_output",
    call_id: "call_s",
    output: [{ stdout: "a", stderr: "", outcome: { type: "exit", exit_code: 0 } }],
  },
  {
    type: "apply_patch_call",
    call_id: "call_p",
    status: "completed",
    operation: { type: "delete_file", path: "a" },
  },
  { type: "apply_patch_call_output", call_id: "call_p", status: "completed" },
  { type: "compaction", encrypted_content: "enc" },
];
