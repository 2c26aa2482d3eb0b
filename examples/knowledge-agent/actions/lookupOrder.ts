const { rows } = await client.findTableRows({
  table: 'OrdersTable',
  filter: { orderId: input.orderId },
  limit: 1,
});
const order = rows[0];
if (!order) return { found: false, orderId: input.orderId };
return { found: true, orderId: input.orderId, status: order.status, since: order.statusChangedAt };
