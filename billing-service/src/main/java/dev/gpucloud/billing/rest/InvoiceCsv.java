package dev.gpucloud.billing.rest;

import dev.gpucloud.billing.fold.AdjustmentLine;
import dev.gpucloud.billing.fold.InvoiceLine;
import dev.gpucloud.billing.fold.InvoiceStatement;
import dev.gpucloud.billing.fold.ManualAdjustment;

/**
 * An invoice as CSV (RFC 4180: comma-separated, CRLF line ends, fields with a comma, quote or line break
 * quoted): a header, a row per line (kind USAGE) and per adjustment (kind ADJUSTMENT, with the month it
 * belongs to and its reason), and a TOTAL row. An adjustment finance booked by hand is an ADJUSTMENT row too, for
 * this invoice's own month, with no job, SKU or capacity type and 0 seconds, so that a reader who adds up every
 * row but TOTAL, and knows only these kinds, still arrives at the total. Text that a spreadsheet would run as a formula (starting with
 * =, +, -, @) is prefixed with an apostrophe.
 */
final class InvoiceCsv {

    static final String HEADER = "tenant,month,status,kind,for_month,job_id,sku,capacity_type,seconds,"
            + "rate_micros_per_hour,amount_micros,rate_from,flag,reason";

    private InvoiceCsv() {
    }

    static String of(InvoiceStatement statement) {
        StringBuilder csv = new StringBuilder(HEADER).append("\r\n");
        String prefix = text(statement.tenant()) + "," + statement.month() + "," + statement.status() + ",";
        for (InvoiceLine line : statement.lines()) {
            csv.append(prefix).append("USAGE,").append(statement.month()).append(',').append(text(line.jobId()))
                    .append(',').append(text(line.sku())).append(',').append(line.capacityType()).append(',')
                    .append(line.seconds()).append(',').append(line.rateMicrosPerHour()).append(',')
                    .append(line.amountMicros()).append(',').append(line.rateFrom() == null ? "" : line.rateFrom())
                    .append(',').append(text(line.flag())).append(",\r\n");
        }
        for (AdjustmentLine line : statement.adjustments()) {
            csv.append(prefix).append("ADJUSTMENT,").append(line.forMonth()).append(',').append(text(line.jobId()))
                    .append(',').append(text(line.sku())).append(',').append(line.capacityType()).append(',')
                    .append(line.seconds()).append(',').append(line.rateMicrosPerHour()).append(',')
                    .append(line.amountMicros()).append(',').append(line.rateFrom() == null ? "" : line.rateFrom())
                    .append(',').append(text(line.flag())).append(',').append(text(line.reason())).append("\r\n");
        }
        for (ManualAdjustment manual : statement.manualAdjustments()) {
            csv.append(prefix).append("ADJUSTMENT,").append(manual.month()).append(",,,,0,0,")
                    .append(manual.amountMicros()).append(",,,").append(text(manual.reason())).append("\r\n");
        }
        // the total under amount_micros, in a row as wide as the header
        csv.append(prefix).append("TOTAL,,,,,,,").append(statement.totalMicros()).append(",,,\r\n");
        return csv.toString();
    }

    static String text(String value) {
        if (value == null) {
            return "";
        }
        String safe = !value.isEmpty() && "=+-@".indexOf(value.charAt(0)) >= 0 ? "'" + value : value;
        if (safe.contains(",") || safe.contains("\"") || safe.contains("\n") || safe.contains("\r")) {
            return "\"" + safe.replace("\"", "\"\"") + "\"";
        }
        return safe;
    }
}
