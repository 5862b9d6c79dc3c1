// Package tools holds the Vesper chatbot's tools: the fifteen of the
// specification (four day-ahead, one more price-curve, three Power BI
// usage, seven project execution) and the general_sql_query escape hatch.
//
// Each tool is a typed method of Toolkit, func(ctx, Args) (*Result, error),
// whose Args struct carries json and jsonschema tags; Toolkit.Tools wraps
// them with tool.New so a model sees their schemas. The caller (tenant,
// user, permissions) comes from the tool.CallInfo in the context, and every
// tool checks the rbac permission matrix before it reads anything.
//
// SQL is fixed text with $n placeholders: no value the model or the user
// writes is ever put into SQL text. compare_hub_zones, which in the
// specification turned hub-zone names into column aliases, returns them as
// result fields instead. Entity names are normalised first (package
// entity); project names resolve against the tenant's live data, and an
// ambiguous name comes back as Meta.Candidates with a question in Meta.Note.
//
// AgentTools is the per-agent registry, and Settings the per-tenant
// enable/disable table chat_agent_tools; ForAgent combines them.
//
// What each tool says it searched (Meta.Searched), which an empty answer repeats, is data, in
// texts.json ([ParseTexts]).
//
//	k := tools.New(w, nil)
//	ctx = tool.WithCallInfo(ctx, tool.CallInfo{Tenant: "vesper", Permissions: rbac.PermissionsOf(rbac.Analyst)})
//	res, err := k.GetAverageAnnualPrice(ctx, tools.AveragePriceArgs{Vendor: "Ascend", Market: "CAISO", HubZone: "NP15", Year: 2025})
package tools
